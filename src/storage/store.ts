/** Storage behind one narrow interface, so a Postgres + object-store implementation can follow the SQLite one. */

export const scopes = ['tts', 'vc', 'separate', 'transcribe', 'voices', 'metrics', 'admin'] as const;
export type Scope = (typeof scopes)[number];

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  hash: string;
  /** First characters of the key, shown in listings so people can tell keys apart. */
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface FileRecord {
  id: string;
  /** Key that created it; only that key (or an admin) may read it. */
  ownerKeyId: string;
  name: string;
  contentType: string;
  bytes: number;
  /** Blob store key. */
  blobKey: string;
  createdAt: string;
  expiresAt: string;
}

export interface VoiceRecord {
  id: string;
  /** Key that created it. Cloned voices are visible to their owner and to admin keys. */
  ownerKeyId: string;
  name: string;
  languages: string[];
  genderEstimate: 'female' | 'male' | null;
  description: string;
  labels: Record<string, string>;
  referenceSeconds: number;
  engine: string;
  createdAt: string;
  /** Blob key prefix holding the processed clips and every derived file. */
  blobPrefix: string;
  /** Derived data (speaker embedding, engine statistics), JSON. */
  analysis: Record<string, unknown>;
}

export interface VoiceRepository {
  insert(record: VoiceRecord): void;
  get(id: string): VoiceRecord | undefined;
  list(): VoiceRecord[];
  update(id: string, changes: Partial<Pick<VoiceRecord, 'name' | 'description' | 'labels' | 'analysis'>>): VoiceRecord | undefined;
  delete(id: string): boolean;
}

export interface KeyRepository {
  insert(record: ApiKeyRecord): void;
  findByHash(hash: string): ApiKeyRecord | undefined;
  list(): ApiKeyRecord[];
  /** Returns false when no such key exists. */
  revoke(id: string, at: string): boolean;
  touch(id: string, at: string): void;
}

export interface FileRepository {
  insert(record: FileRecord): void;
  get(id: string): FileRecord | undefined;
  expired(now: string): FileRecord[];
  delete(id: string): void;
}

export interface BlobStore {
  /** Moves a finished file into the store atomically (rename); the key is final only once this returns. */
  putFile(key: string, sourcePath: string): Promise<number>;
  /** Writes bytes atomically (temp file + rename). */
  putBytes(key: string, bytes: Uint8Array): Promise<number>;
  /** Moves a finished directory of scratch files (from tempPath) under a prefix at once (rename). */
  putDirectory(prefix: string, sourceDir: string): Promise<void>;
  /** Names directly under a prefix (files and sub-prefixes); empty when there is nothing. */
  list(prefix: string): Promise<string[]>;
  /** Local path for reading (streaming). */
  pathOf(key: string): string;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** A fresh path for scratch files (uploads, intermediate results) on the same file system. */
  tempPath(suffix?: string): string;
  /**
   * Removes every scratch file. Only the server calls it, at start: other processes on the same data dir (the CLI) would
   * remove a running server's uploads and staged files.
   */
  clearScratch(): Promise<void>;
}

export interface Store {
  keys: KeyRepository;
  files: FileRepository;
  voices: VoiceRepository;
  blobs: BlobStore;
  close(): void;
}
