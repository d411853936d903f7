/**
 * GET /v1/audio/tts/stream: text in pieces (as an LLM writes it), speech out as binary frames while the text keeps coming.
 * Text is spoken as soon as a clause (at the start) or a sentence is complete; `flush` speaks what is buffered, `cancel`
 * stops at once, `close` finishes the text and ends the session.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import { outputSampleRate as outputSampleRateOf, startEncoder, type StreamingEncoder } from '../../audio/encode.js';
import { livePcmEncoder, type LivePcmEncoder } from '../../audio/live-audio.js';
import { VoxError } from '../../core/errors.js';
import type { SynthesisService } from '../../operations/synthesize/service.js';
import { takeSpeakable, type SpeechStream, type SpeechStreamFormat } from '../../operations/synthesize/speech-stream.js';
import type { ApiKeyRecord } from '../../core/records.js';
import { speechClientEvents, type SpeechClientEvent } from '../schemas/realtime.js';
import { closeCodes, errorFields, eventParser, RealtimeConnection, type RealtimeShared } from './connection.js';

const parseEvent = eventParser<SpeechClientEvent>(speechClientEvents);
/** Text waiting to be spoken beyond this is refused (the client writes much faster than speech is made). */
const maxBufferedCharacters = 20_000;
/** Synthesis waits while this much audio is sent but not yet taken by the client. */
const audioHighWaterBytes = 1024 * 1024;
/**
 * Until this much audio has been sent, a complete clause is spoken on its own: each piece is then short to make, so the
 * next is ready before a player has finished the last one. After that, whole sentences (better prosody).
 */
const clauseStartSeconds = 3;

export interface SpeechSocketOptions extends RealtimeShared {
  synthesis: SynthesisService;
}

const errorEvent = (error: VoxError): Record<string, unknown> => ({ type: 'error', error: errorFields(error) });

/** Sends speech audio in the session's format. */
interface AudioSink {
  write(samples: Float32Array): void;
  /** Stops at once, dropping audio not yet sent; a new sink is needed for more speech. */
  abort(): void;
  /** Sends what the codec still holds. */
  end(): Promise<void>;
}

async function audioSink(
  format: SpeechStreamFormat,
  inputSampleRate: number,
  outputSampleRate: number,
  send: (data: Buffer) => void,
): Promise<AudioSink> {
  if (format === 'pcm16') {
    const pcm: LivePcmEncoder = await livePcmEncoder(inputSampleRate, outputSampleRate);
    let stopped = false;
    return {
      write: (samples) => {
        if (!stopped) send(pcm.encode(samples));
      },
      abort: () => {
        stopped = true;
        pcm.close();
      },
      end: async () => pcm.close(),
    };
  }
  const encoder: StreamingEncoder = startEncoder({ format, inputSampleRate, channels: 1 });
  let stopped = false;
  encoder.output.on('data', (data: Buffer) => {
    if (!stopped) send(data);
  });
  const ended = new Promise<void>((resolve) => encoder.output.once('close', resolve));
  return {
    write: (samples) => void encoder.write(samples).catch(() => undefined),
    abort: () => {
      stopped = true;
      encoder.abort();
    },
    end: async () => {
      encoder.end();
      await ended;
    },
  };
}

export function serveSpeechSocket(socket: WebSocket, caller: ApiKeyRecord, log: FastifyBaseLogger, options: SpeechSocketOptions): void {
  const sessionId = `sess_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  let stream: SpeechStream | undefined;
  let format: SpeechStreamFormat = 'pcm16';
  let outputSampleRate = 24000;
  let sink: AudioSink | undefined;
  let buffer = '';
  let flushRequested = false;
  let closing = false;
  let sentSamples = 0;
  let speaking: Promise<void> | undefined;
  let current = new AbortController();

  const connection = new RealtimeConnection({
    kind: 'speech',
    socket,
    keyId: caller.id,
    shared: options,
    log,
    errorEvent,
    onMessage: (data, isBinary) => handle(data, isBinary),
    onClose: () => {
      current.abort(new VoxError('aborted', 'The speech session ended.'));
      sink?.abort();
    },
  });
  if (!connection.open) return;

  const newSink = async (): Promise<AudioSink> =>
    audioSink(format, stream!.sampleRate, outputSampleRate, (data) => {
      connection.sendBinary(data);
    });

  const clauseOk = (): boolean => !stream || sentSamples < clauseStartSeconds * stream.sampleRate;
  const cutting = (final: boolean) => ({ final, clauseOk: clauseOk(), opening: sentSamples === 0 });

  /** Speaks every piece that is ready, one after another; then answers a flush or a close. */
  const speakReady = async (): Promise<void> => {
    for (;;) {
      const take = takeSpeakable(buffer, cutting(flushRequested || closing));
      if (!take) break;
      buffer = take.rest;
      const signal = current.signal;
      const startSeconds = sentSamples / stream!.sampleRate;
      try {
        sink ??= await newSink();
        const pieceSink = sink;
        await stream!.speak(
          take.piece,
          async (chunk) => {
            // Backpressure: the engine waits for a client that takes audio slower than it is made.
            while (connection.open && connection.bufferedBytes > audioHighWaterBytes && !signal.aborted) await sleep(20);
            signal.throwIfAborted();
            pieceSink.write(chunk.waveform.samples);
            sentSamples += chunk.waveform.samples.length;
          },
          signal,
        );
      } catch (error) {
        if (signal.aborted) return;
        connection.reportError(error, null);
        continue;
      }
      connection.send({
        type: 'alignment',
        text: take.piece,
        audio_start: round(startSeconds),
        audio_end: round(sentSamples / stream!.sampleRate),
      });
    }
    if (flushRequested && buffer.trim() === '') {
      flushRequested = false;
      connection.send({ type: 'flushed', audio_seconds: round(sentSamples / stream!.sampleRate) });
    }
    if (closing && buffer.trim() === '') {
      await sink?.end();
      connection.send({ type: 'done', audio_seconds: round(sentSamples / stream!.sampleRate) });
      connection.close(closeCodes.normal, 'done');
    }
  };

  /** Work for the speaking loop: a piece ready, a flush or a close to answer. */
  const hasWork = (): boolean => flushRequested || closing || takeSpeakable(buffer, cutting(false)) !== undefined;
  const kick = (): void => {
    if (speaking || !connection.open) return;
    speaking = speakReady().finally(() => {
      speaking = undefined;
      if (hasWork()) kick();
    });
  };

  const handle = async (data: Buffer, isBinary: boolean): Promise<void> => {
    if (isBinary)
      throw new VoxError('invalid_request', 'The speech socket takes JSON messages (start, text, flush, cancel, close), not binary ones.');
    const event = parseEvent(data);
    if (event.type !== 'start' && !stream)
      throw new VoxError('invalid_request', "Send 'start' (voice_id, language, format...) before anything else.", { param: 'type' });
    switch (event.type) {
      case 'start': {
        if (stream) throw new VoxError('invalid_request', "The session has started already: 'start' is sent once.", { param: 'type' });
        if (event.sample_rate !== undefined && (event.format ?? 'pcm16') !== 'pcm16')
          throw new VoxError('invalid_request', "'sample_rate' applies to pcm16 only.", { param: 'sample_rate' });
        stream = await options.synthesis.openStream(
          {
            voice_id: event.voice_id,
            ...(event.language ? { language: event.language } : {}),
            ...(event.emotion ? { emotion: event.emotion } : {}),
            ...(event.speed !== undefined ? { speed: event.speed } : {}),
            ...(event.pronunciation_dictionary_ids ? { pronunciation_dictionary_ids: event.pronunciation_dictionary_ids } : {}),
          },
          caller,
        );
        format = event.format ?? 'pcm16';
        outputSampleRate = format === 'pcm16' ? (event.sample_rate ?? stream.sampleRate) : outputSampleRateOf(format, stream.sampleRate);
        connection.send({
          type: 'started',
          session: {
            id: sessionId,
            voice_id: event.voice_id,
            language: stream.language,
            engine: stream.engine,
            format,
            sample_rate: outputSampleRate,
            warnings: stream.warnings,
          },
        });
        return;
      }
      case 'text':
        if (closing) throw new VoxError('invalid_request', "The session is closing: no text after 'close'.", { param: 'type' });
        if (buffer.length + event.text.length > maxBufferedCharacters)
          throw new VoxError(
            'payload_too_large',
            `More than ${maxBufferedCharacters} characters are waiting to be spoken: this text was dropped; send more as speech catches ` +
              `up.`,
            { param: 'text' },
          );
        buffer += event.text;
        return kick();
      case 'flush':
        flushRequested = true;
        return kick();
      case 'cancel': {
        buffer = '';
        flushRequested = false;
        current.abort(new VoxError('aborted', 'Cancelled by the client.'));
        current = new AbortController();
        sink?.abort();
        sink = undefined;
        await speaking;
        connection.send({ type: 'cancelled', audio_seconds: round(sentSamples / stream!.sampleRate) });
        return;
      }
      case 'close':
        closing = true;
        return kick();
    }
  };
}

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;
