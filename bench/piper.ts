/**
 * Piper bench: our Piper engine side by side with the reference implementation (PyPI piper-tts), same voice (joe, US
 * English, medium), same texts (the TTS bench's English sentences: bench/lib/sentences.ts). Writes bench/results/piper.json.
 * - CPU: each side in its own process loads joe, speaks a warm-up sentence, then every text; process CPU seconds (all
 *   threads) over the texts, ours / reference, rounds alternated (ours first, then reference first, ...);
 * - first audio: time to the first byte of a streamed one-sentence request over our HTTP API (pcm), joe's voice;
 * - round trip: joe's speech (ours, and the reference's last round) transcribed by whisper base (our transcription
 *   engine, language given), WER;
 * - DNSMOS (speechmos, run by the reference's Python): joe (ours and reference), Kokoro's and espeak-ng's default US
 *   English voices, on the same texts at 16 kHz.
 * Nothing is tuned on these sentences: every figure is over all of them.
 *
 * The reference runs in a Python environment of its own, outside the repository, named by VOXD_PIPER_PYTHON:
 *   python3 -m venv ~/venvs/piper-tts
 *   ~/venvs/piper-tts/bin/pip install piper-tts==1.8.0 speechmos==0.0.1.1 librosa==0.11.0
 *   VOXD_PIPER_PYTHON=~/venvs/piper-tts/bin/python npm run bench piper
 * `--rounds N` (default 3): CPU rounds per side. `--dnsmos-texts N` (default all): DNSMOS on the first N texts only. `--first-audio`: measures first audio again and replaces that section of
 * the results file (wall-clock figures depend on what else runs on the machine; the load average is kept beside them).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { decodeFile } from '../src/audio/decode.js';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { resample } from '../src/audio/resample.js';
import type { Waveform } from '../src/audio/waveform.js';
import type { Synthesizer } from '../src/operations/synthesize/synthesizer.js';
import { WhisperCppTranscriber } from '../src/operations/transcribe/engines/whisper-cpp.js';
import { buildTestApp, makeTempDir, type TestApp } from '../test/helpers/app.js';
import { modelFile } from '../test/helpers/models.js';
import { collect, joeModelId, joeVoiceId, loadPiper } from '../test/helpers/tts.js';
import { firstWordEnglish, roundTripKokoro } from './lib/sentences.js';
import { errorRate } from './lib/wer.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const threads = Number(process.env.VOXD_THREADS ?? 2);
const texts = [...roundTripKokoro['en-us']!, ...roundTripKokoro['en-gb']!, ...firstWordEnglish];
const joeFile = 'en_US-joe-medium.onnx';
const warmUp = 'Warm up.';

const round = (value: number, digits = 3): number => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

interface CpuRun {
  cpuSeconds: number;
  wallSeconds: number;
  audioSeconds: number;
}

/**
 * The reference: piper-tts's PiperVoice, its defaults (the voice's scales, onnxruntime's default threads), sentence by
 * sentence as its synthesize() splits them; writes each text's audio when given a directory.
 */
const referenceScript = `
import json, sys, time, wave
from piper import PiperVoice
model, texts_file, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
texts = json.load(open(texts_file))
voice = PiperVoice.load(model)
def speak(text):
    return [chunk for chunk in voice.synthesize(text)]
speak(${JSON.stringify(warmUp)})
cpu, wall = time.process_time(), time.perf_counter()
spoken = [speak(text) for text in texts]
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
samples = 0
for i, chunks in enumerate(spoken):
    samples += sum(len(c.audio_int16_bytes) // 2 for c in chunks)
    if out_dir:
        with wave.open(f"{out_dir}/{i:03d}.wav", "wb") as w:
            w.setnchannels(1); w.setsampwidth(2); w.setframerate(chunks[0].sample_rate)
            for c in chunks: w.writeframes(c.audio_int16_bytes)
rate = spoken[0][0].sample_rate
print(json.dumps({"cpuSeconds": cpu, "wallSeconds": wall, "audioSeconds": samples / rate}))
`;

/** DNSMOS P.835 (speechmos) of every 16 kHz wav in a directory, by file name. */
const dnsmosScript = `
import json, os, sys
import librosa
import onnxruntime
# One thread per session: on a shared, loaded machine onnxruntime's spinning thread pool is many times slower.
_Session = onnxruntime.InferenceSession
def _one_thread(path, *args, **kwargs):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return _Session(path, sess_options=options, providers=["CPUExecutionProvider"])
onnxruntime.InferenceSession = _one_thread
from speechmos import dnsmos
folder = sys.argv[1]
scores = {}
for name in sorted(os.listdir(folder)):
    audio, _ = librosa.load(os.path.join(folder, name), sr=16000)
    r = dnsmos.run(audio, 16000)
    scores[name] = {"ovrl": float(r["ovrl_mos"]), "sig": float(r["sig_mos"]), "bak": float(r["bak_mos"]), "p808": float(r["p808_mos"])}
print(json.dumps(scores))
`;

/** Child process: our engine, measured as the reference is. */
async function oursChild(textsFile: string): Promise<void> {
  const list = JSON.parse(readFileSync(textsFile, 'utf8')) as string[];
  const piper = await loadPiper(threads);
  const speak = (text: string) => collect(piper.synthesize({ text, language: 'en-us', voice: { id: joeVoiceId } }));
  await speak(warmUp);
  const [cpu, wall] = [process.cpuUsage(), performance.now()];
  let samples = 0;
  for (const text of list) samples += (await speak(text)).samples.length;
  const used = process.cpuUsage(cpu);
  const run: CpuRun = {
    cpuSeconds: (used.user + used.system) / 1e6,
    wallSeconds: (performance.now() - wall) / 1000,
    audioSeconds: samples / piper.sampleRate,
  };
  await piper.close();
  process.stdout.write(`${JSON.stringify(run)}\n`);
}

/** Time to the first byte of a streamed one-sentence request in joe's voice (pcm), each text after a warm-up request. */
async function firstAudioOverHttp(app: TestApp) {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.app.server.address() as AddressInfo;
  const loadAtStart = loadavg();
  const samples: Array<{ text: string; firstByteMs: number; totalMs: number }> = [];
  for (const text of [warmUp, ...texts]) {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/audio/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text, voice_id: joeVoiceId, stream: true, format: 'pcm' }),
    });
    if (response.status !== 200 || response.headers.get('x-voxd-engine') !== 'piper')
      throw new Error(`HTTP ${response.status} (${response.headers.get('x-voxd-engine')}): ${await response.text()}`);
    const reader = response.body!.getReader();
    let firstByteMs = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read())
      if (firstByteMs === 0 && r.value.length > 0) firstByteMs = performance.now() - started;
    if (text !== warmUp) samples.push({ text, firstByteMs: round(firstByteMs, 1), totalMs: round(performance.now() - started, 1) });
  }
  const firstBytes = samples.map((s) => s.firstByteMs).sort((a, b) => a - b);
  const medianFirstByteMs = round(median(firstBytes), 1);
  process.stdout.write(`first audio: median ${medianFirstByteMs} ms, max ${firstBytes.at(-1)} ms (load ${loadavg()[0]!.toFixed(1)})\n`);
  return {
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadavg() },
    medianFirstByteMs,
    p90FirstByteMs: firstBytes[Math.floor(firstBytes.length * 0.9)]!,
    maxFirstByteMs: firstBytes.at(-1)!,
    targetMs: 300,
    met: medianFirstByteMs <= 300,
    samples,
  };
}

async function runProcess(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let [out, err] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited with ${code}: ${err.slice(-2000)}`))));
  });
}

const lastJson = <T>(output: string): T => JSON.parse(output.trim().split('\n').at(-1)!) as T;

async function main(): Promise<void> {
  const python = process.env.VOXD_PIPER_PYTHON;
  if (!python) {
    process.stderr.write(
      'bench piper needs the reference (PyPI piper-tts) in a Python environment named by VOXD_PIPER_PYTHON:\n' +
        '  python3 -m venv ~/venvs/piper-tts\n' +
        '  ~/venvs/piper-tts/bin/pip install piper-tts==1.8.0 speechmos==0.0.1.1 librosa==0.11.0\n' +
        '  VOXD_PIPER_PYTHON=~/venvs/piper-tts/bin/python npm run bench piper\n',
    );
    process.exit(2);
  }
  const roundsArgument = process.argv.indexOf('--rounds');
  const rounds = roundsArgument >= 0 ? Number(process.argv[roundsArgument + 1]) : 3;
  const dnsmosArgument = process.argv.indexOf('--dnsmos-texts');
  const dnsmosTexts = dnsmosArgument >= 0 ? Number(process.argv[dnsmosArgument + 1]) : texts.length;
  const referenceVersion = (
    await promisify(execFile)(python, ['-c', 'from importlib.metadata import version; print(version("piper-tts"))'])
  ).stdout.trim();
  const joe = await modelFile(joeModelId, joeFile);
  const work = makeTempDir('bench-piper');
  const textsFile = path.join(work, 'texts.json');
  writeFileSync(textsFile, JSON.stringify(texts));
  const referenceAudioDir = path.join(work, 'reference');
  mkdirSync(referenceAudioDir);
  const loadAtStart = loadavg();

  // CPU, one process per side and round, alternated.
  const cpuRounds: Array<{ ours: CpuRun; reference: CpuRun }> = [];
  for (let r = 0; r < rounds; r++) {
    const ours = async () =>
      lastJson<CpuRun>(await runProcess(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--ours-child', textsFile]));
    const reference = async () =>
      lastJson<CpuRun>(await runProcess(python, ['-c', referenceScript, joe, textsFile, r === rounds - 1 ? referenceAudioDir : '']));
    // Ours first in even rounds, the reference first in odd ones.
    if (r % 2 === 0) {
      const oursRun = await ours();
      cpuRounds.push({ ours: oursRun, reference: await reference() });
    } else {
      const referenceRun = await reference();
      cpuRounds.push({ ours: await ours(), reference: referenceRun });
    }
    const last = cpuRounds.at(-1)!;
    process.stdout.write(
      `cpu round ${r + 1}: ours ${last.ours.cpuSeconds.toFixed(2)} s, reference ${last.reference.cpuSeconds.toFixed(2)} s (audio ${last.ours.audioSeconds.toFixed(1)} / ${last.reference.audioSeconds.toFixed(1)} s)\n`,
    );
  }
  const sum = (runs: CpuRun[], key: keyof CpuRun): number => runs.reduce((total, run) => total + run[key], 0);
  const oursRuns = cpuRounds.map((c) => c.ours);
  const referenceRuns = cpuRounds.map((c) => c.reference);
  const cpuRatio = sum(oursRuns, 'cpuSeconds') / sum(referenceRuns, 'cpuSeconds');
  // Per audio second as well: the two sides' audio lengths differ (durations are drawn at random; silence trimmed).
  const cpuPerAudioRatio =
    sum(oursRuns, 'cpuSeconds') / sum(oursRuns, 'audioSeconds') / (sum(referenceRuns, 'cpuSeconds') / sum(referenceRuns, 'audioSeconds'));

  // First audio over HTTP, and our joe/Kokoro/espeak-ng speech for the round trip and DNSMOS, in one app.
  const app = await buildTestApp();
  const firstAudio = await firstAudioOverHttp(app);

  const engine = async (id: string) => (await app.container.synthesizers.get(id)!.get()) as Synthesizer;
  const systems: Array<{ name: string; engine: Synthesizer; voice: string }> = [];
  for (const [name, id] of [
    ['piper (ours, joe)', 'piper'],
    ['kokoro', 'kokoro-82m'],
    ['espeak-ng', 'espeak-ng'],
  ] as const) {
    const synthesizer = await engine(id);
    systems.push({ name, engine: synthesizer, voice: id === 'piper' ? joeVoiceId : synthesizer.voiceFor('en-us') });
  }
  const dnsmosDir = path.join(work, 'dnsmos');
  mkdirSync(dnsmosDir);
  const speech = new Map<string, Waveform[]>();
  for (const [s, system] of systems.entries()) {
    const waveforms: Waveform[] = [];
    for (const [i, text] of texts.entries()) {
      const audio = await collect(system.engine.synthesize({ text, language: 'en-us', voice: { id: system.voice } }));
      const waveform = await resample({ samples: audio.samples, sampleRate: audio.sampleRate, channels: 1 }, 16000);
      waveforms.push(waveform);
      if (i < dnsmosTexts)
        await encodeWaveformToFile(waveform, { format: 'wav' }, path.join(dnsmosDir, `${s}-${String(i).padStart(3, '0')}.wav`));
    }
    speech.set(system.name, waveforms);
  }
  const referenceSpeech: Waveform[] = [];
  for (const [i, name] of readdirSync(referenceAudioDir).sort().entries()) {
    const waveform = await decodeFile(path.join(referenceAudioDir, name), { sampleRate: 16000, channels: 1 });
    referenceSpeech.push(waveform);
    if (i < dnsmosTexts) await encodeWaveformToFile(waveform, { format: 'wav' }, path.join(dnsmosDir, `${systems.length}-${name}`));
  }
  speech.set('piper-tts (reference, joe)', referenceSpeech);
  await app.close();

  // Round trip: joe, ours and the reference's, through whisper base.
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads,
  });
  const roundTrip: Record<
    string,
    { wer: number; errors: number; words: number; samples: Array<{ text: string; heard: string; errors: number }> }
  > = {};
  for (const name of ['piper (ours, joe)', 'piper-tts (reference, joe)']) {
    const samples: Array<{ text: string; heard: string; errors: number }> = [];
    let [errors, words] = [0, 0];
    for (const [i, text] of texts.entries()) {
      const heard = (await transcriber.transcribe(speech.get(name)![i]!.samples, { language: 'en', temperature: 0 })).segments
        .map((segment) => segment.text)
        .join(' ')
        .trim();
      const rate = errorRate(text, heard, 'en');
      errors += rate.errors;
      words += rate.referenceLength;
      samples.push({ text, heard, errors: rate.errors });
    }
    roundTrip[name] = { wer: round(errors / words, 4), errors, words, samples };
    process.stdout.write(`round trip ${name}: wer ${(errors / words).toFixed(4)} (${errors}/${words})\n`);
  }
  await transcriber.close();

  const oursWer = roundTrip['piper (ours, joe)']!.wer;
  const results = {
    description:
      'Our Piper engine (onnxruntime-node, espeak-ng 1.51 phonemes) beside PyPI piper-tts, voice en_US-joe-medium, the TTS bench English sentences (bench/lib/sentences.ts: roundTripKokoro en-us and en-gb, firstWordEnglish). CPU: process CPU seconds over all texts after a warm-up sentence, one process per side and round, rounds alternated. First audio: first byte of a streamed pcm request to POST /v1/audio/tts (in-process server, joe). Round trip: whisper base, language en, temperature 0. DNSMOS: speechmos P.835 at 16 kHz (one onnxruntime thread), mean over the first dnsmos.texts texts.',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, threads, loadAverage: { start: loadAtStart, end: loadavg() } },
    reference: { package: 'piper-tts', version: referenceVersion },
    texts: texts.length,
    cpu: {
      rounds: cpuRounds.map((c) => ({
        ours: { cpuSeconds: round(c.ours.cpuSeconds), wallSeconds: round(c.ours.wallSeconds), audioSeconds: round(c.ours.audioSeconds) },
        reference: {
          cpuSeconds: round(c.reference.cpuSeconds),
          wallSeconds: round(c.reference.wallSeconds),
          audioSeconds: round(c.reference.audioSeconds),
        },
      })),
      ratioOursToReference: round(cpuRatio),
      ratioPerAudioSecond: round(cpuPerAudioRatio),
      target: 1,
      met: cpuRatio <= 1,
    },
    firstAudio,
    roundTrip: { ...roundTrip, target: 0.03, met: oursWer <= 0.03 },
  };
  // Written before DNSMOS too (the slowest part on a loaded machine), then again with it.
  const resultsFile = path.join(benchDir, 'results', 'piper.json');
  writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  // DNSMOS, per system: mean over the first dnsmosTexts texts.
  const scores = lastJson<Record<string, { ovrl: number; sig: number; bak: number; p808: number }>>(
    await runProcess(python, ['-c', dnsmosScript, dnsmosDir]),
  );
  const names = [...systems.map((s) => s.name), 'piper-tts (reference, joe)'];
  const dnsmos = Object.fromEntries(
    names.map((name, s) => {
      const rows = Object.entries(scores)
        .filter(([file]) => file.startsWith(`${s}-`))
        .map(([, score]) => score);
      const mean = (key: 'ovrl' | 'sig' | 'bak' | 'p808') => round(rows.reduce((total, row) => total + row[key], 0) / rows.length);
      return [name, { files: rows.length, ovrl: mean('ovrl'), sig: mean('sig'), bak: mean('bak'), p808: mean('p808') }];
    }),
  );
  process.stdout.write(`dnsmos ${JSON.stringify(dnsmos)}\n`);

  writeFileSync(resultsFile, `${JSON.stringify({ ...results, dnsmos: { texts: dnsmosTexts, ...dnsmos } }, null, 2)}\n`);
  process.stdout.write(
    `cpu ratio ${cpuRatio.toFixed(3)} (per audio second ${cpuPerAudioRatio.toFixed(3)}); written bench/results/piper.json\n`,
  );
}

/** Measures first audio again and replaces that section of the results file (the machine is shared: a quieter moment). */
async function firstAudioOnly(): Promise<void> {
  const file = path.join(benchDir, 'results', 'piper.json');
  const results = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const app = await buildTestApp();
  results.firstAudio = await firstAudioOverHttp(app);
  await app.close();
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}

const childArgument = process.argv.indexOf('--ours-child');
if (childArgument >= 0) await oursChild(process.argv[childArgument + 1]!);
else if (process.argv.includes('--first-audio')) await firstAudioOnly();
else await main();
