/**
 * Realtime bench: the eval utterances of ../shared/eval/asr (up to 10 s) streamed at real-time pace through the live
 * transcription socket of a real server process, and text streamed at 15 tokens/s through the speech socket.
 * Writes bench/results/realtime.json:
 * - final-text latency after the end of speech (server VAD, silence_duration_ms 300) and after a manual commit;
 * - time from speech start to the first partial text, and the interval between partials;
 * - WER/CER of the live path against the file path (POST /v1/audio/transcribe) on the same utterances; and, because 17
 *   utterances cannot tell a gap of 2 points from none, on 27 more that the server synthesises (bench/lib/sentences.ts:
 *   three sentences in each of Kokoro's nine languages, in its default voice; `generated` in the results), and on 27 other
 *   sentences in a second voice (`generated_other_voices`), held out from the choice of the live decoding's context;
 * - concurrent sessions (1, 2, 4, 6), each streaming utterances back to back: final latency and whether it grows;
 * - streaming speech: first audio after the first complete clause arrives, stalls of a player fed at arrival.
 *
 *   npm run bench -- realtime   (BENCH_REALTIME_SESSIONS=1,2,4: concurrency levels; BENCH_REALTIME_UTTERANCES=3: a quick run)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeFile } from '../src/audio/decode.js';
import { packageRoot } from '../src/core/version.js';
import { evalDir, makeTempDir, sharedModelsDir } from '../test/helpers/app.js';
import { RealtimeClient, toPcm16 } from './lib/realtime-client.js';
import { startServerProcess, waitUntilReady } from './lib/server-process.js';
import { otherVoiceKokoro, roundTripKokoro, whisperLanguage } from './lib/sentences.js';
import { errorRate } from './lib/wer.js';

const key = `vx_${'r'.repeat(43)}`;
const sampleRate = 24000;
const silenceSeconds = 300 / 1000;
const completedType = 'conversation.item.input_audio_transcription.completed';
const deltaType = 'conversation.item.input_audio_transcription.delta';
const unspaced = new Set(['zh', 'ja', 'th', 'ko']);

interface Utterance {
  id: string;
  language: string;
  transcript: string;
  seconds: number;
  pcm: Buffer;
  file: string;
}

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};
const round = (value: number, digits = 0): number => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values: number[]): number => percentile(values, 50);

async function loadUtterances(): Promise<Utterance[]> {
  const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
    asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
  };
  const utterances: Utterance[] = [];
  const limit = Number(process.env.BENCH_REALTIME_UTTERANCES ?? Infinity);
  for (const item of manifest.asr.filter((a) => a.duration_s <= 10).slice(0, limit)) {
    const samples = (await decodeFile(path.join(evalDir, item.audio), { sampleRate, channels: 1 })).samples;
    utterances.push({
      id: item.id,
      language: item.language,
      transcript: item.transcript,
      seconds: item.duration_s,
      pcm: toPcm16(samples),
      file: path.join(evalDir, item.audio),
    });
  }
  return utterances;
}

/**
 * Sentences of bench/lib/sentences.ts spoken by the server (POST /v1/audio/tts, WAV): `default` in each language's default
 * voice, `other` in a second voice.
 */
async function generatedUtterances(base: string, dir: string, set: 'default' | 'other'): Promise<Utterance[]> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const capabilities = (await (await fetch(`${base}/v1/capabilities`, { headers })).json()) as {
    tts: { default_voices: Record<string, string> };
  };
  const voices =
    set === 'default'
      ? Object.entries(roundTripKokoro).map(([language, sentences]) => ({
          language,
          voice: capabilities.tts.default_voices[language]!,
          sentences,
        }))
      : Object.entries(otherVoiceKokoro).map(([language, v]) => ({ language, ...v }));
  const utterances: Utterance[] = [];
  for (const { language, voice, sentences } of voices) {
    for (const [i, text] of sentences.entries()) {
      const response = await fetch(`${base}/v1/audio/tts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ text, language, voice_id: voice, format: 'wav' }),
      });
      if (!response.ok) throw new Error(`${language} ${i}: ${response.status} ${await response.text()}`);
      const file = path.join(dir, `${voice}-${language}-${i}.wav`);
      writeFileSync(file, Buffer.from(await response.arrayBuffer()));
      const samples = (await decodeFile(file, { sampleRate, channels: 1 })).samples;
      utterances.push({
        id: `kokoro/${voice}/${language}/${i}`,
        language: whisperLanguage(language),
        transcript: text,
        seconds: samples.length / sampleRate,
        pcm: toPcm16(samples),
        file,
      });
    }
  }
  return utterances;
}

/** The live and the file path's errors on one utterance. */
function compared(utterance: Utterance, liveText: string, fileText: string) {
  const live = errorRate(utterance.transcript, liveText, utterance.language);
  const file = errorRate(utterance.transcript, fileText, utterance.language);
  return {
    live_error: round(live.rate * 100, 1),
    file_error: round(file.rate * 100, 1),
    live_errors: live.errors,
    file_errors: file.errors,
    reference_length: live.referenceLength,
    live_text: liveText,
    file_text: fileText,
  };
}

/** Errors over all the words and characters (an utterance of 8 words does not weigh as much as one of 20), and who wins. */
function errorSummary(rows: Array<ReturnType<typeof compared>>) {
  const pooled = (column: 'live_errors' | 'file_errors') =>
    round((100 * rows.reduce((n, r) => n + r[column], 0)) / rows.reduce((n, r) => n + r.reference_length, 0), 2);
  return {
    pooled_error_live_percent: pooled('live_errors'),
    pooled_error_file_percent: pooled('file_errors'),
    utterances_live_better: rows.filter((r) => r.live_error < r.file_error).length,
    utterances_live_worse: rows.filter((r) => r.live_error > r.file_error).length,
  };
}

const silence = (seconds: number): Buffer => Buffer.alloc(Math.round(seconds * sampleRate) * 2);

async function session(url: string, update: Record<string, unknown>): Promise<RealtimeClient> {
  const client = await RealtimeClient.connect(url, { key });
  await client.waitFor('transcription_session.created');
  client.send({ type: 'transcription_session.update', session: update });
  await client.waitFor('transcription_session.updated');
  return client;
}

interface LiveResult {
  id: string;
  language: string;
  seconds: number;
  text: string;
  turns: number;
  /** From the wall time the last sample of the utterance was sent. */
  finalAfterSpeechMs: number;
  firstPartialMs: number | null;
  partialIntervalsMs: number[];
}

/** One utterance through server VAD: 0.5 s of silence, the speech, 2 s of silence, all at real-time pace. */
async function liveUtterance(url: string, utterance: Utterance): Promise<LiveResult> {
  const client = await session(url, {
    input_audio_transcription: { language: utterance.language },
    turn_detection: { type: 'server_vad', silence_duration_ms: silenceSeconds * 1000 },
  });
  const leadSeconds = 0.5;
  const startedAt = performance.now();
  const sentAt = await client.streamPcm16(Buffer.concat([silence(leadSeconds), utterance.pcm, silence(2)]), { sampleRate, pieceMs: 40 });

  // A pause inside the utterance longer than the silence duration ends a turn there: the utterance is all its turns.
  await client.waitFor('input_audio_buffer.committed', { timeoutMs: 30_000 });
  const turns = (): number => client.events.filter((e) => e.type === 'input_audio_buffer.committed').length;
  for (
    const deadline = performance.now() + 30_000;
    client.events.filter((e) => e.type === completedType).length < turns() && performance.now() < deadline;
  )
    await sleep(20);
  const completedEvents = client.events.filter((e) => e.type === completedType);
  const completed = completedEvents.at(-1)!;
  const started = client.events.find((e) => e.type === 'input_audio_buffer.speech_started');
  // The end of speech as the server's VAD found it (a file's own trailing silence is not speech): the turn's audio_end_ms
  // less the silence that closed it, as a wall time on the sender's clock.
  const stopped = client.events.filter((e) => e.type === 'input_audio_buffer.speech_stopped').at(-1);
  const speechEndMs = ((stopped?.audio_end_ms as number | undefined) ?? (leadSeconds + utterance.seconds) * 1000) - silenceSeconds * 1000;
  const speechEndAt = sentAt[Math.max(0, Math.floor(speechEndMs / 40))] ?? startedAt;
  const deltas = client.events.filter(
    (e) => e.type === deltaType && e.item_id === completedEvents[0]!.item_id && (e.transcript as string).length > 0,
  );
  // Speech starts where VAD put it, less the prefix padding it adds (300 ms).
  const speechStartAt = startedAt + ((started?.audio_start_ms as number | undefined) ?? leadSeconds * 1000) + 300;
  await client.close();
  return {
    id: utterance.id,
    language: utterance.language,
    seconds: utterance.seconds,
    text: completedEvents.map((e) => e.transcript as string).join(' '),
    turns: completedEvents.length,
    finalAfterSpeechMs: completed.receivedAtMs - speechEndAt,
    firstPartialMs: deltas[0] ? deltas[0].receivedAtMs - speechStartAt : null,
    partialIntervalsMs: deltas.slice(1).map((d, i) => d.receivedAtMs - deltas[i]!.receivedAtMs),
  };
}

/** Manual mode: the utterance sent at real-time pace, committed at its end; latency from the commit. */
async function committedUtterance(url: string, utterance: Utterance): Promise<number> {
  const client = await session(url, { input_audio_transcription: { language: utterance.language }, turn_detection: null });
  await client.streamPcm16(utterance.pcm, { sampleRate, pieceMs: 40 });
  const commitAt = performance.now();
  client.send({ type: 'input_audio_buffer.commit' });
  const completed = await client.waitFor(completedType, { timeoutMs: 30_000 });
  await client.close();
  return completed.receivedAtMs - commitAt;
}

async function fileText(base: string, utterance: Utterance): Promise<string> {
  const form = new FormData();
  form.set('language', utterance.language);
  form.set('audio', new Blob([readFileSync(utterance.file)]), path.basename(utterance.file));
  const response = await fetch(`${base}/v1/audio/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  if (!response.ok) throw new Error(`${utterance.id}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { text: string }).text;
}

/** `sessions` clients, each streaming English utterances back to back (1 s apart) for `seconds`. */
async function concurrent(url: string, english: Utterance[], sessions: number, seconds: number) {
  const latencies: Array<{ ms: number; atSeconds: number }> = [];
  const partialIntervals: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      const client = await session(url, {
        input_audio_transcription: { language: 'en' },
        turn_detection: { type: 'server_vad', silence_duration_ms: silenceSeconds * 1000 },
      });
      // When each 40 ms piece of the session's audio was sent, by its index.
      const sentAt: number[] = [];
      let index = s;
      // Sessions start staggered, as independent users would.
      await sleep(s * 700);
      while (performance.now() - t0 < seconds * 1000) {
        const utterance = english[index++ % english.length]!;
        sentAt.push(...(await client.streamPcm16(Buffer.concat([utterance.pcm, silence(1)]), { sampleRate, pieceMs: 40 })));
      }
      sentAt.push(...(await client.streamPcm16(silence(1), { sampleRate, pieceMs: 40 })));
      const committed = (): number => client.events.filter((e) => e.type === 'input_audio_buffer.committed').length;
      const deadline = performance.now() + 30_000;
      while (client.events.filter((e) => e.type === completedType).length < committed() && performance.now() < deadline) await sleep(100);
      // Each turn's latency from the end of its speech (audio_end_ms less the silence that closed it), as for one utterance.
      for (const event of client.events.filter((e) => e.type === completedType && (e.transcript as string) !== '')) {
        const speechEndAt = sentAt[Math.max(0, Math.floor(((event.audio_end_ms as number) - silenceSeconds * 1000) / 40))];
        if (speechEndAt !== undefined) latencies.push({ ms: event.receivedAtMs - speechEndAt, atSeconds: (speechEndAt - t0) / 1000 });
      }
      const byItem = new Map<string, number[]>();
      for (const delta of client.events.filter((e) => e.type === deltaType))
        byItem.set(delta.item_id as string, [...(byItem.get(delta.item_id as string) ?? []), delta.receivedAtMs]);
      for (const times of byItem.values()) partialIntervals.push(...times.slice(1).map((t, i) => t - times[i]!));
      await client.close();
    }),
  );
  const firstHalf = latencies.filter((l) => l.atSeconds < seconds / 2).map((l) => l.ms);
  const secondHalf = latencies.filter((l) => l.atSeconds >= seconds / 2).map((l) => l.ms);
  return {
    sessions,
    finals: latencies.length,
    final_p50_ms: round(median(latencies.map((l) => l.ms))),
    final_p95_ms: round(
      percentile(
        latencies.map((l) => l.ms),
        95,
      ),
    ),
    final_p50_first_half_ms: round(median(firstHalf)),
    final_p50_second_half_ms: round(median(secondHalf)),
    partial_interval_p50_ms: round(median(partialIntervals)),
    // Keeps up: finals stay within 2 s of the end of speech and do not drift upwards over the run.
    keeps_up:
      percentile(
        latencies.map((l) => l.ms),
        95,
      ) < 2000 && median(secondHalf) < median(firstHalf) * 1.5 + 200,
  };
}

/** Text at 15 tokens/s through the speech socket; a player starts at the first audio and plays continuously. */
async function speech(base: string) {
  const text =
    'Sure, I can help with that. The train leaves at half past nine from platform four, and the trip takes about two hours. Remember to bring your ticket, because the conductor checks every carriage before the first stop.';
  const tokens = text.match(/\S+\s*/g) ?? [];
  const runs = [];
  for (let run = 0; run < 3; run++) {
    const client = await RealtimeClient.connect(`${base.replace('http', 'ws')}/v1/audio/tts/stream`, { key });
    client.send({ type: 'start', voice_id: 'af_heart', format: 'pcm16', sample_rate: 24000 });
    await client.waitFor('started');
    const t0 = performance.now();
    let firstClauseAt = 0;
    for (const token of tokens) {
      client.send({ type: 'text', text: token });
      if (!firstClauseAt && /[,.]\s*$/.test(token)) firstClauseAt = performance.now();
      await sleep(1000 / 15);
    }
    client.send({ type: 'close' });
    await client.closed;
    // Player: plays each frame when it has arrived and the previous one has finished.
    let playhead = 0;
    let stallMs = 0;
    let stalls = 0;
    for (const frame of client.binary) {
      const durationMs = (frame.data.length / 2 / 24000) * 1000;
      if (playhead === 0) playhead = frame.receivedAtMs;
      else if (frame.receivedAtMs > playhead + 20) {
        stalls++;
        stallMs += frame.receivedAtMs - playhead;
        playhead = frame.receivedAtMs;
      }
      playhead += durationMs;
    }
    runs.push({
      first_audio_after_first_clause_ms: round(client.binary[0]!.receivedAtMs - firstClauseAt),
      text_seconds: round((performance.now() - t0) / 1000, 1),
      stalls,
      stall_ms: round(stallMs),
    });
  }
  return {
    tokens_per_second: 15,
    first_audio_after_first_clause_ms_median: median(runs.map((r) => r.first_audio_after_first_clause_ms)),
    stalls_total: runs.reduce((n, r) => n + r.stalls, 0),
    runs,
  };
}

/** Generated utterances through server VAD and the file path: the error summary, and each utterance. */
async function generatedErrors(url: string, base: string, dir: string, set: 'default' | 'other') {
  const rows: Array<ReturnType<typeof compared> & { id: string; seconds: number; final_after_speech_ms: number }> = [];
  for (const utterance of await generatedUtterances(base, dir, set)) {
    const result = await liveUtterance(url, utterance);
    const errors = compared(utterance, result.text, await fileText(base, utterance));
    rows.push({
      id: utterance.id,
      seconds: round(utterance.seconds, 2),
      final_after_speech_ms: round(result.finalAfterSpeechMs),
      ...errors,
    });
    process.stdout.write(
      `${utterance.id}: final ${round(result.finalAfterSpeechMs)} ms after speech; errors live ${errors.live_errors} file ${errors.file_errors} of ${errors.reference_length} (${result.text})\n`,
    );
  }
  return {
    utterances: rows.length,
    final_after_speech_p50_ms: round(median(rows.map((g) => g.final_after_speech_ms))),
    final_after_speech_p95_ms: round(
      percentile(
        rows.map((g) => g.final_after_speech_ms),
        95,
      ),
    ),
    ...errorSummary(rows),
    rows,
  };
}

const dataDir = makeTempDir('bench-realtime');
const server = await startServerProcess(dataDir, {
  VOXD_API_KEYS: key,
  VOXD_LOCAL_MODEL_DIRS: sharedModelsDir,
  VOXD_RATE_LIMIT_PER_MINUTE: '1000000',
  VOXD_MAX_CONCURRENT_PER_KEY: '1000',
  VOXD_REALTIME_SESSIONS_PER_KEY: '100',
});
try {
  await waitUntilReady(server.base);
  const url = `${server.base.replace('http', 'ws')}/v1/realtime?intent=transcription`;
  const utterances = await loadUtterances();
  // Warm-up: the first decode of a process pays for allocations.
  await committedUtterance(url, utterances[0]!);

  const live: LiveResult[] = [];
  const commitLatencies: number[] = [];
  const rows: Array<ReturnType<typeof compared> & Record<string, unknown>> = [];
  for (const utterance of utterances) {
    const result = await liveUtterance(url, utterance);
    const commitMs = await committedUtterance(url, utterance);
    const errors = compared(utterance, result.text, await fileText(server.base, utterance));
    live.push(result);
    commitLatencies.push(commitMs);
    rows.push({
      id: utterance.id,
      language: utterance.language,
      seconds: utterance.seconds,
      turns: result.turns,
      final_after_speech_ms: round(result.finalAfterSpeechMs),
      final_after_commit_ms: round(commitMs),
      first_partial_ms: result.firstPartialMs === null ? null : round(result.firstPartialMs),
      metric: unspaced.has(utterance.language) ? 'cer' : 'wer',
      ...errors,
    });
    process.stdout.write(
      `${utterance.id}: final ${round(result.finalAfterSpeechMs)} ms after speech, ${round(commitMs)} ms after commit, first partial ${result.firstPartialMs === null ? '-' : round(result.firstPartialMs)} ms; error live ${errors.live_error}% file ${errors.file_error}% (${result.turns} turns: ${result.text})\n`,
    );
  }
  const meanError = (column: 'live_error' | 'file_error') => round(rows.reduce((n, r) => n + r[column], 0) / rows.length, 2);

  const generated = await generatedErrors(url, server.base, dataDir, 'default');
  const otherVoices = await generatedErrors(url, server.base, dataDir, 'other');
  const levels = (process.env.BENCH_REALTIME_SESSIONS ?? '1,2,4,6').split(',').map(Number);
  const english = utterances.filter((u) => u.language === 'en');
  const concurrency = [];
  for (const sessions of levels) {
    const level = await concurrent(url, english, sessions, 40);
    concurrency.push(level);
    process.stdout.write(`${sessions} sessions: ${JSON.stringify(level)}\n`);
  }
  const speechResult = await speech(server.base);
  process.stdout.write(`speech: ${JSON.stringify(speechResult)}\n`);
  const result = {
    machine: '2 cores, no GPU; server and client on the same machine',
    settings: { turn_detection: { type: 'server_vad', silence_duration_ms: silenceSeconds * 1000 }, model: 'whisper-base', piece_ms: 40 },
    single_session: {
      utterances: rows.length,
      final_after_speech_p50_ms: round(median(live.map((l) => l.finalAfterSpeechMs))),
      final_after_speech_p95_ms: round(
        percentile(
          live.map((l) => l.finalAfterSpeechMs),
          95,
        ),
      ),
      final_after_commit_p50_ms: round(median(commitLatencies)),
      final_after_commit_p95_ms: round(percentile(commitLatencies, 95)),
      first_partial_p50_ms: round(median(live.flatMap((l) => (l.firstPartialMs === null ? [] : [l.firstPartialMs])))),
      first_partial_p95_ms: round(
        percentile(
          live.flatMap((l) => (l.firstPartialMs === null ? [] : [l.firstPartialMs])),
          95,
        ),
      ),
      utterances_without_partial: live.filter((l) => l.firstPartialMs === null).length,
      partial_interval_p50_ms: round(median(live.flatMap((l) => l.partialIntervalsMs))),
      partial_interval_p95_ms: round(
        percentile(
          live.flatMap((l) => l.partialIntervalsMs),
          95,
        ),
      ),
      mean_error_live_percent: meanError('live_error'),
      mean_error_file_percent: meanError('file_error'),
      ...errorSummary(rows),
    },
    generated,
    generated_other_voices: otherVoices,
    concurrency,
    speech: speechResult,
    utterances: rows,
  };
  writeFileSync(path.join(packageRoot, 'bench/results/realtime.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result.single_session, null, 2)}\n`);
} finally {
  server.child.kill('SIGTERM');
  await server.exited;
}
