/**
 * HiFi-GAN resynthesis over the English clips of ../shared/eval/asr (issue 36, step 1): each clip's log-mel frames through
 * the vocoder, judged against the clip itself side by side. Per clip: log-mel correlation and mean absolute difference of
 * output and input, GE2E similarity of output to input, whisper base's WER against the reference transcript for the
 * input and for the output (the change is the vocoder's cost in words), and RTF (wall clock of the vocoder run / audio).
 * Writes bench/results/vocoder.json.
 *
 * Run: VOXD_SHARED_DIR=/work/shared node --import tsx bench/vocoder.ts [--limit N] [--threads N]
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decodeFile } from '../src/audio/decode.js';
import { vocoderLogMel } from '../src/audio/mel.js';
import { resample } from '../src/audio/resample.js';
import type { Waveform } from '../src/audio/waveform.js';
import { HifiganVocoder } from '../src/operations/convert/vocoder.js';
import { WhisperCppTranscriber } from '../src/operations/transcribe/engines/whisper-cpp.js';
import { cosineSimilarity, SpeakerEncoder } from '../src/speakers/embedding.js';
import { compareMels } from '../test/helpers/mel.js';
import { ge2eModelPath, modelFile } from '../test/helpers/models.js';
import { repoRoot, sharedDir } from '../test/helpers/vc-assets.js';
import { errorRate } from './lib/wer.js';

const { values } = parseArgs({ options: { limit: { type: 'string' }, threads: { type: 'string', default: '2' } } });
const manifest = JSON.parse(await readFile(path.join(sharedDir, 'eval', 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string }>;
};
const clips = manifest.asr.filter((c) => c.language === 'en').slice(0, values.limit ? Number(values.limit) : undefined);

const vocoder = await HifiganVocoder.load(await modelFile('hifigan-universal', 'hifigan.onnx'), { threads: Number(values.threads) });
const encoder = await SpeakerEncoder.load(await ge2eModelPath());
const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
  modelId: 'whisper-base',
  threads: 2,
});
const transcribe = async (waveform: Waveform): Promise<string> => {
  const result = await transcriber.transcribe((await resample(waveform, 16000)).samples, { language: 'en', temperature: 0 });
  return result.segments
    .map((s) => s.text)
    .join(' ')
    .trim();
};

interface ClipResult {
  id: string;
  seconds: number;
  correlation: number;
  meanAbsDifference: number;
  ge2eSimilarity: number;
  werInput: number;
  werOutput: number;
  rtf: number;
}

const results: ClipResult[] = [];
for (const clip of clips) {
  const input = await decodeFile(path.join(sharedDir, 'eval', clip.audio), { sampleRate: 22050, channels: 1 });
  const started = performance.now();
  const output = await vocoder.resynthesize(input);
  const rtf = (performance.now() - started) / 1000 / (input.samples.length / 22050);
  const mel = compareMels(vocoderLogMel(input.samples).data, vocoderLogMel(output.samples).data);
  const ge2eSimilarity = cosineSimilarity(
    await encoder.embedUtterance(await resample(input, 16000)),
    await encoder.embedUtterance(await resample(output, 16000)),
  );
  const werInput = errorRate(clip.transcript, await transcribe(input), 'en').rate;
  const werOutput = errorRate(clip.transcript, await transcribe(output), 'en').rate;
  const result: ClipResult = { id: clip.id, seconds: input.samples.length / 22050, ...mel, ge2eSimilarity, werInput, werOutput, rtf };
  results.push(result);
  process.stderr.write(`${JSON.stringify(result)}\n`);
}
await Promise.all([vocoder.close(), encoder.close(), transcriber.close()]);

const mean = (pick: (r: ClipResult) => number): number => results.reduce((s, r) => s + pick(r), 0) / results.length;
const report = {
  bench: 'vocoder',
  date: new Date().toISOString(),
  model: 'hifigan-universal',
  threads: Number(values.threads),
  clips: results.length,
  summary: {
    melCorrelation: mean((r) => r.correlation),
    melMeanAbsDifference: mean((r) => r.meanAbsDifference),
    ge2eSimilarity: mean((r) => r.ge2eSimilarity),
    werInput: mean((r) => r.werInput),
    werOutput: mean((r) => r.werOutput),
    rtf: mean((r) => r.rtf),
  },
  results,
};
await writeFile(path.join(repoRoot, 'bench', 'results', 'vocoder.json'), `${JSON.stringify(report, null, 2)}\n`);
console.log(JSON.stringify(report.summary));
