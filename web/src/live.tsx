/** Live transcription: the microphone streamed over the realtime socket (GET /v1/realtime?intent=transcription), turns as they are spoken. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, storedKey } from './api';
import { ErrorMessage, speakerColours } from './fields';
import { microphoneError } from './hooks';
import workletUrl from './pcm16-worklet.ts?worker&url';

/** The session's default input format, pcm16, is 24 kHz mono. */
const liveSampleRate = 24000;
/** How long Stop waits for the turns still being decoded before it closes the session. */
const finishMilliseconds = 15_000;

interface Turn {
  id: string;
  text: string;
  speaker: string | null;
  final: boolean;
}

/** The fields of the session's server events the page reads (OpenAI's names; `speaker` is voxd's). */
interface ServerEvent {
  type: string;
  item_id?: string;
  transcript?: string;
  speaker?: string;
  error?: { message: string; param?: string | null };
}

interface Session {
  socket: WebSocket;
  stopAudio: () => void;
  speaking: boolean;
  /** Turns begun and not yet completed or failed. */
  pending: Set<string>;
  finishing: boolean;
}

export function LiveTranscription({ language, diarize }: { language: string; diarize: boolean }) {
  const [state, setState] = useState<'idle' | 'starting' | 'live' | 'finishing'>('idle');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [error, setError] = useState<unknown>(null);
  const session = useRef<Session | null>(null);
  // The microphone and the socket go with the page.
  useEffect(() => () => session.current?.socket.close(), []);

  const updateTurn = (id: string, change: Partial<Turn>) =>
    setTurns((all) =>
      all.some((t) => t.id === id)
        ? all.map((t) => (t.id === id ? { ...t, ...change } : t))
        : [...all, { id, text: '', speaker: null, final: false, ...change }],
    );

  const onEvent = (current: Session, event: ServerEvent) => {
    const id = event.item_id ?? '';
    const settle = () => {
      current.pending.delete(id);
      if (current.finishing && current.pending.size === 0) current.socket.close(1000);
    };
    switch (event.type) {
      case 'error':
        return setError(new ApiError(event.error?.message ?? 'The session reported an error.', event.error?.param ?? null));
      case 'input_audio_buffer.speech_started':
        current.speaking = true;
        current.pending.add(id);
        return;
      case 'input_audio_buffer.speech_stopped':
        current.speaking = false;
        return;
      case 'conversation.item.input_audio_transcription.delta':
        return updateTurn(id, { text: event.transcript ?? '' });
      case 'conversation.item.input_audio_transcription.completed':
        updateTurn(id, { text: event.transcript ?? '', speaker: event.speaker ?? null, final: true });
        return settle();
      case 'conversation.item.input_audio_transcription.failed':
        setError(new ApiError(event.error?.message ?? 'A turn could not be transcribed.'));
        return settle();
    }
  };

  const start = async () => {
    setError(null);
    setTurns([]);
    setState('starting');
    let stream: MediaStream | undefined;
    let context: AudioContext | undefined;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
      context = new AudioContext({ sampleRate: liveSampleRate });
      await context.audioWorklet.addModule(workletUrl);
    } catch (caught) {
      for (const track of stream?.getTracks() ?? []) track.stop();
      void context?.close();
      setState('idle');
      setError(microphoneError(caught));
      return;
    }
    const audio = context;
    const microphone = stream;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    // A browser cannot set headers on a WebSocket: the key goes as a subprotocol, as OpenAI's browser clients send it.
    const socket = new WebSocket(`${scheme}://${location.host}/v1/realtime?intent=transcription`, [
      'realtime',
      `openai-insecure-api-key.${storedKey()}`,
    ]);
    const writer = new AudioWorkletNode(audio, 'pcm16-writer');
    let listening = true;
    const current: Session = {
      socket,
      // Once: Stop and the socket closing both call it.
      stopAudio: () => {
        if (!listening) return;
        listening = false;
        for (const track of microphone.getTracks()) track.stop();
        void audio.close();
      },
      speaking: false,
      pending: new Set(),
      finishing: false,
    };
    session.current = current;
    writer.port.onmessage = (message: MessageEvent<ArrayBuffer>) => {
      if (socket.readyState === WebSocket.OPEN && !current.finishing) socket.send(message.data);
    };
    // Pulled by the destination so it runs; it writes no output, so nothing is heard.
    audio.createMediaStreamSource(microphone).connect(writer).connect(audio.destination);
    let opened = false;
    socket.onopen = () => {
      opened = true;
      socket.send(
        JSON.stringify({
          type: 'transcription_session.update',
          session: { input_audio_transcription: language === 'auto' ? {} : { language }, diarize },
        }),
      );
      setState('live');
    };
    socket.onmessage = (message: MessageEvent<string>) => onEvent(current, JSON.parse(message.data) as ServerEvent);
    socket.onclose = (event) => {
      current.stopAudio();
      session.current = null;
      setState('idle');
      setTurns((all) => all.filter((t) => t.final || t.text));
      // 1000: closed by Stop. Closed before it opened: the upgrade was refused (the browser does not say why).
      if (event.code === 1000) return;
      setError(
        new ApiError(
          opened
            ? `The live session ended (${event.code}${event.reason ? `: ${event.reason}` : ''}).`
            : 'The live session could not be opened: check the API key (it needs the transcribe scope).',
        ),
      );
    };
  };

  /** Stops listening; what was said up to now is still transcribed (the current turn is committed) before the session closes. */
  const stop = () => {
    const current = session.current;
    if (!current) return;
    current.finishing = true;
    current.stopAudio();
    if (current.speaking) current.socket.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
    if (current.pending.size === 0) current.socket.close(1000);
    else {
      setState('finishing');
      setTimeout(() => current.socket.close(1000), finishMilliseconds);
    }
  };

  const speakerIndex = new Map([...new Set(turns.map((t) => t.speaker).filter((s) => s !== null))].map((s, i) => [s, i % speakerColours]));
  return (
    <section class="panel" aria-labelledby="live-heading">
      <h3 id="live-heading">Live from the microphone</h3>
      <div class="inline">
        {state === 'idle' || state === 'starting' ? (
          <button type="button" onClick={() => void start()} disabled={state === 'starting'}>
            Start live transcription
          </button>
        ) : (
          <button type="button" onClick={stop} disabled={state === 'finishing'}>
            Stop
          </button>
        )}
        <small class="hint" role="status">
          {
            {
              idle: 'Uses the language and speaker labelling chosen above.',
              starting: 'Connecting…',
              live: 'Listening: speak, and each pause ends a turn.',
              finishing: 'Finishing the last turn…',
            }[state]
          }
        </small>
      </div>
      <ErrorMessage form="live" error={error} />
      {turns.length > 0 && (
        <div class="transcript live" role="log" aria-live="polite" aria-label="Live transcript">
          {turns.map((turn) => (
            <div key={turn.id} class={`turn${turn.speaker === null ? '' : ` speaker-${speakerIndex.get(turn.speaker) ?? 0}`}`}>
              {turn.speaker !== null && <p class="speaker">{turn.speaker}</p>}
              <p class={turn.final ? 'segment final' : 'segment partial'}>{turn.text || '…'}</p>
            </div>
          ))}
        </div>
      )}
    </section>
  );
}
