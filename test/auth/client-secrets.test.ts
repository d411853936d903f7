import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

test('a client secret speaks for its key with the realtime scopes only, until it expires or the key is revoked', async () => {
  const { record } = await t.container.apiKeys.create('secrets', ['transcribe', 'voices']);
  const secret = t.container.clientSecrets.mint(record, 60);
  assert.deepEqual(secret.scopes, ['transcribe']);
  const verified = await t.container.clientSecrets.verify(secret.value);
  assert.equal(verified?.id, record.id);
  assert.deepEqual(verified?.scopes, ['transcribe']);

  const expired = t.container.clientSecrets.mint(record, -1);
  assert.equal(await t.container.clientSecrets.verify(expired.value), undefined);
  // Another key's signature does not carry over.
  const { record: other } = await t.container.apiKeys.create('other', ['transcribe']);
  const forged = `${secret.value.split('.')[0]}.${t.container.clientSecrets.mint(other, 60).value.split('.')[1]}`;
  assert.equal(await t.container.clientSecrets.verify(forged), undefined);
  assert.equal(await t.container.clientSecrets.verify('ek_garbage'), undefined);

  await t.container.apiKeys.revoke(record.id);
  assert.equal(await t.container.clientSecrets.verify(secret.value), undefined);
});

test('a key without a realtime scope cannot mint one', async () => {
  const { key } = await t.container.apiKeys.create('voices-only', ['voices']);
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/realtime/client_secrets',
    headers: { authorization: `Bearer ${key}` },
    payload: {},
  });
  assert.equal(response.statusCode, 403);
  assert.equal(response.json().error.code, 'forbidden');
});
