/**
 * Short-lived client secrets (`ek_...`) for browsers and apps that must not hold an API key: minted with a key, they open
 * realtime sessions only, in that key's name, until they expire or the key is revoked. They are signed, not stored: the
 * signing key is derived from the API key's stored hash, so every node sharing the database verifies them.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { VoxError } from '../core/errors.js';
import type { KeyRepository } from '../storage/store.js';
import type { ApiKeyRecord, Scope } from '../core/records.js';

export const clientSecretPrefix = 'ek_';
/** What a client secret may do. */
export const clientSecretScopes: readonly Scope[] = ['transcribe', 'tts'];

export interface ClientSecret {
  value: string;
  /** Unix seconds. */
  expiresAt: number;
  scopes: Scope[];
}

const grantedScopes = (record: ApiKeyRecord): Scope[] =>
  clientSecretScopes.filter((scope) => record.scopes.includes(scope) || record.scopes.includes('admin'));

const signature = (record: ApiKeyRecord, payload: string): Buffer =>
  createHmac('sha256', `voxd client secret ${record.hash}`).update(payload, 'utf8').digest();

export class ClientSecretService {
  constructor(private readonly keys: KeyRepository) {}

  mint(key: ApiKeyRecord, ttlSeconds: number): ClientSecret {
    const scopes = grantedScopes(key);
    if (scopes.length === 0)
      throw new VoxError(
        'forbidden',
        `Client secrets open realtime sessions: this key has none of the scopes they carry (${clientSecretScopes.join(', ')}).`,
      );
    const expiresAt = Math.floor(Date.now() / 1000) + ttlSeconds;
    const payload = Buffer.from(`${key.id}.${expiresAt}.${randomBytes(9).toString('base64url')}`, 'utf8').toString('base64url');
    return { value: `${clientSecretPrefix}${payload}.${signature(key, payload).toString('base64url')}`, expiresAt, scopes };
  }

  /** The key a valid, unexpired secret speaks for, with the scopes of a client secret only; otherwise undefined. */
  async verify(presented: string): Promise<ApiKeyRecord | undefined> {
    const [payload, mac, ...rest] = presented.slice(clientSecretPrefix.length).split('.');
    if (!presented.startsWith(clientSecretPrefix) || !payload || !mac || rest.length > 0) return undefined;
    const [keyId, expiresAt] = Buffer.from(payload, 'base64url').toString('utf8').split('.');
    if (!keyId || !expiresAt || !(Number(expiresAt) > Date.now() / 1000)) return undefined;
    const record = await this.keys.get(keyId);
    if (!record || record.revokedAt) return undefined;
    const expected = signature(record, payload);
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return { ...record, scopes: grantedScopes(record) };
  }
}
