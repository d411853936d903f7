/** The studio's only way to the server: the public API, with the key the person pasted. */
const keyStorageName = 'voxd.apiKey';

/** The key is kept for this tab only (sessionStorage): never in the page, a cookie or localStorage. */
export const storedKey = (): string => sessionStorage.getItem(keyStorageName) ?? '';

export function storeKey(key: string): void {
  if (key) sessionStorage.setItem(keyStorageName, key);
  else sessionStorage.removeItem(keyStorageName);
}

/** The API's error envelope: `param` names the request field at fault, when there is one. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

interface Envelope {
  error?: { message?: string; param?: string | null };
}

/** A fetch of the API with the key; any non-2xx answer throws its envelope as an ApiError. */
export async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const key = storedKey();
  if (key) headers.set('authorization', `Bearer ${key}`);
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch (error) {
    throw new ApiError(`The server did not answer (${error instanceof Error ? error.message : String(error)}).`);
  }
  if (response.ok) return response;
  const envelope = (await response.json().catch(() => ({}))) as Envelope;
  const { message, param } = envelope.error ?? {};
  throw new ApiError(message ?? `The server answered ${response.status} ${response.statusText}.`, param ?? null);
}

export const apiJson = async <T>(path: string, init?: RequestInit): Promise<T> => (await (await api(path, init)).json()) as T;

/** A result file (GET /v1/audio/files/...): it needs the key, so it is fetched here (and played from a blob: URL). */
export async function apiFile(path: string): Promise<File> {
  const response = await api(path);
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? path.split('/').at(-1)!;
  const blob = await response.blob();
  return new File([blob], name, { type: blob.type });
}

export const jsonBody = (body: unknown): RequestInit => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The parts of GET /v1/capabilities the studio uses to fill its pickers. */
export interface Capabilities {
  tts: { languages: string[]; emotions: string[]; formats: string[]; max_text_characters: number };
  transcribe: { languages: string[] };
  separate: { stems: string[]; formats: string[] };
}

export interface Voice {
  voice_id: string;
  name: string;
  type: 'builtin' | 'cloned';
  languages: string[];
  gender_estimate: 'female' | 'male' | null;
  description: string;
  labels: Record<string, string>;
  reference_seconds: number;
}

type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface Job {
  id: string;
  operation: string;
  status: JobStatus;
  progress: { stage: string; fraction: number } | null;
  created_at: string;
  input: { filename?: string | null; duration_seconds?: number | null };
  result: unknown;
  error: { message?: string; param?: string | null } | null;
  cancel_requested: boolean;
  links: { self: string; events: string; cancel: string };
}

export const isFinal = (job: Job): boolean => job.status === 'succeeded' || job.status === 'failed' || job.status === 'cancelled';

/**
 * A job's Server-Sent Events (the job object on every change, the last one final). Read with fetch, not EventSource,
 * because EventSource cannot send the Authorization header.
 */
async function* jobEvents(path: string): AsyncGenerator<Job> {
  const body = (await api(path)).body;
  if (!body) return;
  let buffered = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    const frames = buffered.split('\n\n');
    buffered = frames.pop() ?? '';
    for (const frame of frames) {
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (data) yield JSON.parse(data) as Job;
    }
  }
}

/**
 * An operation's JSON answer: at once, or (asJob) through the jobs API, reporting each change of the job. A job that
 * fails throws its error as the synchronous call would have.
 */
export async function runOperation<T>(path: string, body: FormData, asJob: boolean, onJob: (job: Job) => void): Promise<T> {
  if (!asJob) return (await (await api(path, { method: 'POST', body })).json()) as T;
  body.append('async', 'true');
  let job = (await (await api(path, { method: 'POST', body })).json()) as Job;
  onJob(job);
  for await (const update of jobEvents(job.links.events)) {
    job = update;
    onJob(job);
  }
  if (job.status === 'succeeded') return job.result as T;
  if (!isFinal(job))
    throw new ApiError(`The connection to job ${job.id} was lost while it was ${job.status}: the Jobs page shows how it ends.`);
  throw new ApiError(job.error?.message ?? `The job was ${job.status}.`, job.error?.param ?? null);
}
