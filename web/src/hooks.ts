/** State helpers the pages share. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiJson, type Voice } from './api';

/** A blob's (or a MediaSource's) object URL, revoked when replaced or when the component goes away. */
export function useObjectUrl(): [string | null, (blob: Blob | MediaSource | null) => void] {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(
    () => () => {
      if (url) URL.revokeObjectURL(url);
    },
    [url],
  );
  return [url, (blob) => setUrl(blob ? URL.createObjectURL(blob) : null)];
}

/** One request at a time: `busy` while it runs, `error` what it threw (an ApiError from the API). */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (action: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/** Saves text as a file through a temporary link. */
export const saveText = (filename: string, text: string, type: string): void => saveBlob(filename, new Blob([text], { type }));

export function saveBlob(filename: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  // The download has taken its copy once the click's task is over.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export interface VoiceList {
  voices: Voice[];
  busy: boolean;
  error: unknown;
  reload: () => Promise<void>;
}

/** The key's voices (GET /v1/voices), shared by the pages that pick or manage voices; `reload` after a change. */
export function useVoices(apiKey: string): VoiceList {
  const [voices, setVoices] = useState<Voice[]>([]);
  const loading = useAction();
  const reload = () => loading.run(async () => setVoices((await apiJson<{ voices: Voice[] }>('/v1/voices')).voices));
  useEffect(() => {
    setVoices([]);
    if (apiKey) void reload();
  }, [apiKey]);
  return { voices, busy: loading.busy, error: loading.error, reload };
}

/** What the page says when the browser refuses the microphone (no device, or permission denied). */
export const microphoneError = (caught: unknown): Error =>
  new Error(`The microphone could not be used (${caught instanceof Error ? caught.message : String(caught)}).`);

/** Microphone recording with MediaRecorder: `start` asks for the microphone, `stop` hands over the recording as a file. */
export function useRecorder(onRecorded: (file: File) => void): {
  recording: boolean;
  error: unknown;
  start: () => Promise<void>;
  stop: () => void;
} {
  const recorder = useRef<MediaRecorder | null>(null);
  const [recording, setRecording] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // The microphone is released if the page goes away while recording.
  useEffect(
    () => () => {
      for (const track of recorder.current?.stream.getTracks() ?? []) track.stop();
    },
    [],
  );
  const start = async () => {
    setError(null);
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const media = new MediaRecorder(stream);
      const chunks: Blob[] = [];
      media.ondataavailable = (event) => chunks.push(event.data);
      media.onstop = () => {
        for (const track of stream.getTracks()) track.stop();
        const type = media.mimeType || 'audio/webm';
        onRecorded(new File(chunks, `recording.${type.includes('ogg') ? 'ogg' : 'webm'}`, { type }));
      };
      media.start();
      recorder.current = media;
      setRecording(true);
    } catch (caught) {
      setError(microphoneError(caught));
    }
  };
  const stop = () => {
    recorder.current?.stop();
    recorder.current = null;
    setRecording(false);
  };
  return { recording, error, start, stop };
}

/** A/B: whichever of two players is playing stops, and the other takes over from the same moment (A when neither plays). */
export function switchSides(a: HTMLMediaElement | null, b: HTMLMediaElement | null): void {
  const [from, to] = a?.paused === false ? [a, b] : [b, a];
  if (!from || !to) return;
  to.currentTime = Math.min(from.currentTime, to.duration || from.currentTime);
  from.pause();
  void to.play();
}
