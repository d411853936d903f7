/**
 * What a worker's engines offer (built-in voices, capabilities), published in the blob store when it starts, so that
 * API-only nodes, which load no models, can list voices, check a named voice and answer /v1/capabilities.
 */
import { VoxError } from '../core/errors.js';
import type { BlobStore } from '../storage/store.js';
import type { BuiltinVoiceSource, VoiceProfile } from '../voices/service.js';

const builtinVoicesKey = 'system/builtin-voices.json';
const capabilitiesKey = 'system/capabilities.json';
const cacheMilliseconds = 30_000;

const noWorkerYet = (): VoxError =>
  new VoxError('overloaded', 'No worker has started yet: built-in voices and capabilities come from the workers.', {
    retryAfterSeconds: 5,
  });

export async function publishCatalog(blobs: BlobStore, builtinVoices: VoiceProfile[], capabilities: unknown): Promise<void> {
  await blobs.putBytes(builtinVoicesKey, Buffer.from(JSON.stringify(builtinVoices)));
  await blobs.putBytes(capabilitiesKey, Buffer.from(JSON.stringify(capabilities)));
}

export class PublishedCatalog implements BuiltinVoiceSource {
  private readonly cache = new Map<string, { at: number; value: Promise<unknown> }>();

  constructor(private readonly blobs: BlobStore) {}

  builtinVoices(): Promise<VoiceProfile[]> {
    return this.read(builtinVoicesKey) as Promise<VoiceProfile[]>;
  }

  capabilities(): Promise<unknown> {
    return this.read(capabilitiesKey);
  }

  referenceSpeech(): Promise<never> {
    // Only operations use it, and they run on workers.
    return Promise.reject(new VoxError('internal', 'Reference speech of built-in voices is made on workers, not on an API-only node.'));
  }

  private read(key: string): Promise<unknown> {
    const cached = this.cache.get(key);
    if (cached && Date.now() - cached.at < cacheMilliseconds) return cached.value;
    const value = this.blobs.exists(key).then(async (exists) => {
      if (!exists) throw noWorkerYet();
      return JSON.parse((await this.blobs.readBytes(key)).toString('utf8')) as unknown;
    });
    // A failed read is not kept: the next call tries again.
    value.catch(() => this.cache.delete(key));
    this.cache.set(key, { at: Date.now(), value });
    return value;
  }
}
