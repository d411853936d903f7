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

export const apiJson = async <T,>(path: string): Promise<T> => (await (await api(path)).json()) as T;

/** The parts of GET /v1/capabilities the studio uses to fill its pickers. */
export interface Capabilities {
  tts: { languages: string[]; emotions: string[]; formats: string[]; max_text_characters: number };
  transcribe: { languages: string[] };
}

export interface Voice {
  voice_id: string;
  name: string;
  type: 'builtin' | 'cloned';
  languages: string[];
  gender_estimate: 'female' | 'male' | null;
}
