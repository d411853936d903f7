import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VoxError } from '../../src/core/errors.js';
import { contractFields } from '../../src/core/contract-fields.js';
import { synthesizeContract } from '../../src/operations/synthesize/contract.js';
import { transcribeFields } from '../../src/operations/transcribe/contract.js';

test('contractFields: fields that match their contract come back typed, extra ones kept', { timeout: 10_000 }, () => {
  const fields = contractFields(synthesizeContract, { text: 'Hello.', voice_id: 'af_heart', emotion: 'happy', speed: 1 });
  assert.equal(fields.emotion, 'happy');
  assert.deepEqual(contractFields(transcribeFields, { language: 'en', diarize: true, file: 'upload:0' }), {
    language: 'en',
    diarize: true,
    file: 'upload:0',
  });
});

test('contractFields: a mismatch is a 400 naming the field (a closed set lists its values)', { timeout: 10_000 }, () => {
  assert.throws(
    () => contractFields(synthesizeContract, { text: 'Hello.', voice_id: 'af_heart', emotion: 'grumpy' }),
    (error: unknown) => {
      assert.ok(error instanceof VoxError);
      assert.equal(error.status, 400);
      assert.equal(error.param, 'emotion');
      assert.match(error.message, /must be one of neutral, happy/);
      return true;
    },
  );
  assert.throws(
    () => contractFields(synthesizeContract, { voice_id: 'af_heart' }),
    (error: unknown) => error instanceof VoxError && error.param === 'text',
  );
  assert.throws(
    () => contractFields(transcribeFields, { num_speakers: 0 }),
    (error: unknown) => error instanceof VoxError && error.param === 'num_speakers',
  );
});
