/** The records and enumerations of the domain: what the store keeps and every layer passes around. */
export const scopes = ['tts', 'vc', 'separate', 'transcribe', 'dub', 'voices', 'metrics', 'admin'] as const;
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
  /** Standard Webhooks signing secret (`whsec_` + base64) of the jobs this key creates; shown at creation and rotation. */
  webhookSecret: string;
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
  /** Derived data (speaker embeddings, engine statistics), JSON. */
  analysis: Record<string, unknown>;
  /** `speech`: a voice to speak in (TTS and voice-conversion target) and to name speakers; `identify`: only the latter. */
  purpose: VoicePurpose;
}

/** A pronunciation dictionary (a W3C PLS lexicon) of one key, applied to speech that names it. */
export interface PronunciationDictionaryRecord {
  id: string;
  ownerKeyId: string;
  name: string;
  /** Its rules in order, as lexicons/contract.ts's PronunciationRule (JSON here: records sit below that layer). */
  rules: Array<Record<string, unknown>>;
  createdAt: string;
}

export const voicePurposes = ['speech', 'identify'] as const;
export type VoicePurpose = (typeof voicePurposes)[number];

export const operations = ['tts', 'vc', 'separate', 'transcribe', 'dub'] as const;
export type Operation = (typeof operations)[number];
export const jobStatuses = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof jobStatuses)[number];
export type FinalJobStatus = Extract<JobStatus, 'succeeded' | 'failed' | 'cancelled'>;

export interface JobProgress {
  stage: string;
  /** 0..1 within the whole job. */
  fraction: number;
}

/** An uploaded input kept in the blob store for the job's lifetime. */
export interface JobInput {
  field: string;
  blobKey: string;
  filename: string;
  bytes: number;
}

/** The error envelope's fields, as the synchronous call would have answered. */
export interface JobError {
  code: string;
  type: string;
  message: string;
  param: string | null;
}

export interface JobRecord {
  id: string;
  ownerKeyId: string;
  operation: Operation;
  /** Which route variant made it (e.g. `openai` for the OpenAI aliases): the result is rendered as that route would. */
  route: string;
  status: JobStatus;
  /** The validated request fields (files replaced by their markers). */
  params: Record<string, unknown>;
  inputs: JobInput[];
  /** Duration of the audio input, when there is one. */
  inputSeconds: number | null;
  progress: JobProgress | null;
  /** The body the synchronous call returns (binary outputs as file URLs). */
  result: unknown;
  error: JobError | null;
  webhookUrl: string | null;
  /** Attempts started so far; a crash mid-job leaves the job to be claimed again until maxAttempts. */
  attempts: number;
  maxAttempts: number;
  /** The worker holding the job while it runs, and until when its lease lasts (renewed while it works). */
  workerId: string | null;
  leaseExpiresAt: string | null;
  cancelRequested: boolean;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Inputs and results are deleted after this. */
  expiresAt: string;
}

export interface WebhookAttempt {
  at: string;
  /** HTTP status, or null when no answer came (refused, timeout, blocked address). */
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookDeliveryRecord {
  /** The `webhook-id`: the same on every retry, so receivers can deduplicate. */
  id: string;
  jobId: string;
  ownerKeyId: string;
  url: string;
  event: string;
  /** The exact body signed and sent. */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: WebhookAttempt[];
  nextAttemptAt: string;
  createdAt: string;
}
