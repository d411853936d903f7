/**
 * whisper.cpp engine on its own (no VAD, no chunking: each eval utterance is one call): WER/CER per language with the
 * language given and with 'auto', language detection, RTF. Compares ggml files, e.g. f16 and q8_0.
 * Usage: node --import tsx bench/asr-engine.ts MODEL.bin [MODEL2.bin ...]   Env: BENCH_THREADS (default 2).
 * Writes bench/results/asr-engine.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { decodeFile } from '../src/audio/decode.js';
import { WhisperModel, type WhisperDecodeOptions } from '../src/operations/transcribe/engines/whisper-native.js';
import { packageRoot } from '../src/core/version.js';
import { characterLanguages, errorRate, type ErrorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
};
const threads = Number(process.env.BENCH_THREADS ?? 2);
const decoding: Omit<WhisperDecodeOptions, 'language'> = {
  threads,
  beamSize: 5,
  bestOf: 5,
  temperatureIncrement: 0.2,
  entropyThreshold: 2.4,
  logprobThreshold: -1,
  noSpeechThreshold: 0.6,
  noContext: true,
  suppressNonSpeech: true,
};
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;

const clips = await Promise.all(
  manifest.asr.map(async (entry) => ({
    entry,
    samples: (await decodeFile(path.join(evalDir, entry.audio), { sampleRate: 16000, channels: 1 })).samples,
  })),
);
interface Row {
  id: string;
  language: string;
  metric: 'wer' | 'cer';
  error: ErrorRate;
  autoError: ErrorRate;
  detected: string;
  detectedProbability: number;
  text: string;
}
const results: Record<string, unknown> = {};
for (const modelPath of process.argv.slice(2)) {
  const model = await WhisperModel.load(modelPath);
  const rows: Row[] = [];
  let audioSeconds = 0;
  let elapsedSeconds = 0;
  let cpuSeconds = 0;
  for (const { entry, samples } of clips) {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const given = await model.transcribe(samples, { ...decoding, language: entry.language });
    elapsedSeconds += (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    cpuSeconds += (cpu.user + cpu.system) / 1e6;
    audioSeconds += samples.length / 16000;
    const auto = await model.transcribe(samples, { ...decoding, language: 'auto' });
    const text = given.segments
      .map((s) => s.text)
      .join('')
      .trim();
    const autoText = auto.segments
      .map((s) => s.text)
      .join('')
      .trim();
    rows.push({
      id: entry.id,
      language: entry.language,
      metric: characterLanguages.has(entry.language) ? 'cer' : 'wer',
      error: errorRate(entry.transcript, text, entry.language),
      autoError: errorRate(entry.transcript, autoText, entry.language),
      detected: auto.language,
      detectedProbability: round(auto.languageProbability, 3),
      text,
    });
    process.stderr.write(`${path.basename(modelPath)} ${entry.id}: ${rows.at(-1)!.error.rate.toFixed(3)} ${text}\n`);
  }
  const pooled = (filter: (r: Row) => boolean, auto = false) => {
    const picked = rows.filter(filter).map((r) => (auto ? r.autoError : r.error));
    return round(picked.reduce((s, e) => s + e.errors, 0) / picked.reduce((s, e) => s + e.referenceLength, 0));
  };
  results[path.basename(modelPath)] = {
    threads,
    english_wer: pooled((r) => r.language === 'en'),
    wer_spaced_languages: pooled((r) => r.metric === 'wer'),
    cer_unspaced_languages: pooled((r) => r.metric === 'cer'),
    english_wer_auto: pooled((r) => r.language === 'en', true),
    wer_spaced_languages_auto: pooled((r) => r.metric === 'wer', true),
    cer_unspaced_languages_auto: pooled((r) => r.metric === 'cer', true),
    language_detection: `${rows.filter((r) => r.detected === r.language).length}/${rows.length}`,
    rtf_language_given: round(elapsedSeconds / audioSeconds, 3),
    // Wall-clock RTF depends on what else runs on the machine; CPU time per audio second does much less.
    cpu_seconds_per_audio_second: round(cpuSeconds / audioSeconds, 3),
    load_average_1min: round(loadavg()[0]!, 2),
    utterances: rows.map((r) => ({
      id: r.id,
      language: r.language,
      [r.metric]: round(r.error.rate),
      [`${r.metric}_auto`]: round(r.autoError.rate),
      detected: r.detected,
      detected_probability: r.detectedProbability,
      text: r.text,
    })),
  };
}
writeFileSync(
  path.join(packageRoot, 'bench/results/asr-engine.json'),
  `${JSON.stringify({ date: new Date().toISOString(), decoding, results }, null, 1)}\n`,
);
process.stdout.write(
  `${JSON.stringify(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { ...(v as object), utterances: undefined }])), null, 1)}\n`,
);
