/** API keys: `vx_` + 32 random bytes (base64url). Only their SHA-256 is stored. */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { VoxError } from '../core/errors.js';
import type { KeyRepository } from '../storage/store.js';
import { scopes as allScopes, type ApiKeyRecord, type Scope } from '../core/records.js';
import { newWebhookSecret } from '../core/webhook-secret.js';

/** The accepted key format: `vx_` + 43 URL-safe base64 characters. */
export const apiKeyPattern = /^vx_[A-Za-z0-9_-]{43}$/;

export interface CreatedKey {
  /** The only time the key is visible. */
  key: string;
  record: ApiKeyRecord;
}

const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export class ApiKeyService {
  constructor(private readonly keys: KeyRepository) {}

  async create(name: string, scopes: readonly Scope[]): Promise<CreatedKey> {
    const key = `vx_${randomBytes(32).toString('base64url')}`;
    return { key, record: await this.insert(key, name, scopes) };
  }

  /** Registers keys from VOXD_API_KEYS with every scope; already known keys are left as they are. */
  async seed(keys: readonly string[]): Promise<void> {
    for (const [index, key] of keys.entries()) {
      if (!(await this.keys.findByHash(hashKey(key)))) await this.insert(key, `bootstrap-${index + 1}`, allScopes);
    }
  }

  /** The active record for a presented key, or undefined. */
  async verify(presented: string): Promise<ApiKeyRecord | undefined> {
    if (!apiKeyPattern.test(presented)) return undefined;
    const hash = hashKey(presented);
    const record = await this.keys.findByHash(hash);
    if (!record) return undefined;
    // The lookup is by hash already; the explicit comparison keeps the check constant-time whatever the store does.
    if (!timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
    if (record.revokedAt) return undefined;
    await this.keys.touch(record.id, new Date().toISOString());
    return record;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.keys.list();
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.keys.revoke(id, new Date().toISOString())))
      throw new VoxError('not_found', `No API key with id '${id}'.`, { param: 'id' });
  }

  /** A new webhook signing secret for a key; the old one stops being used at once. */
  async rotateWebhookSecret(id: string): Promise<string> {
    const secret = newWebhookSecret();
    if (!(await this.keys.setWebhookSecret(id, secret))) throw new VoxError('not_found', `No API key with id '${id}'.`, { param: 'id' });
    return secret;
  }

  private async insert(key: string, name: string, scopes: readonly Scope[]): Promise<ApiKeyRecord> {
    const record: ApiKeyRecord = {
      id: `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
      name,
      hash: hashKey(key),
      prefix: key.slice(0, 7),
      scopes: [...new Set(scopes)],
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
      webhookSecret: newWebhookSecret(),
    };
    await this.keys.insert(record);
    return record;
  }
}

/** Whether a key may use something another key owns (a cloned voice, a result file): its owner and admin keys only. */
export function mayAccess(key: ApiKeyRecord, ownerKeyId: string): boolean {
  return key.id === ownerKeyId || key.scopes.includes('admin');
}

export function parseScopes(text: string): Scope[] {
  const requested = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const scope of requested) {
    if (!(allScopes as readonly string[]).includes(scope)) {
      throw new VoxError('unsupported_value', `Unknown scope '${scope}'. Scopes: ${allScopes.join(', ')}.`, { param: 'scopes' });
    }
  }
  if (requested.length === 0) throw new VoxError('invalid_request', 'At least one scope is required.', { param: 'scopes' });
  return requested as Scope[];
}
