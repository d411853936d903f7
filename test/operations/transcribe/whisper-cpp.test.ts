/**
 * The whisper.cpp transcriber's own logic: the run-on check that sends a reduced-context decoding back to the full window,
 * and the temperature fallback (a prompted decoding that loops, an improbable one, the choice when every temperature failed).
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { decodeFile } from '../../../src/audio/decode.js';
import {
  compressionRatio,
  compressionRatioThreshold,
  looksRunOn,
  loops,
  maxTokens,
  WhisperCppTranscriber,
  withoutRunOn,
  wordsWithinSegment,
} from '../../../src/operations/transcribe/engines/whisper-cpp.js';
import type { WhisperResult } from '../../../src/operations/transcribe/engines/whisper-native.js';
import { evalDir } from '../../helpers/app.js';
import { modelFile, whisperBaseEncoderPath } from '../../helpers/models.js';

const result = (segments: Array<[number, number, string]>): WhisperResult => ({
  language: 'en',
  languageProbability: 1,
  temperature: 0,
  segments: segments.map(([startSeconds, endSeconds, text]) => ({
    startSeconds,
    endSeconds,
    text,
    noSpeechProbability: 0,
    averageLogProbability: -0.2,
    tokens: [],
  })),
});

test('a decoding that fits the audio is accepted, also when its last end time falls in the padding', () => {
  assert.equal(
    looksRunOn(
      result([
        [0, 2.4, ' Hello there.'],
        [2.6, 5.2, ' General Kenobi.'],
      ]),
      5.3,
    ),
    false,
  );
  assert.equal(looksRunOn(result([[0, 6, ' Der Raum wurde als Leichenhalle genutzt.']]), 5.26), false);
});

test('a segment repeated (case and spacing aside) is a run-on', () => {
  assert.equal(
    looksRunOn(
      result([
        [0, 5, ' Der Raum wurde genutzt.'],
        [5, 5.2, 'der raum wurde genutzt. '],
      ]),
      5.3,
    ),
    true,
  );
});

test('for live finals a run-on is trimmed of what was made up: repeated segments and segments past the speech', () => {
  const trimmed = withoutRunOn(
    result([
      [0, 4, ' He began a confused complaint.'],
      [4.1, 4.3, ' The horizon.'],
      [5.02, 5.3, ' He began a confused complaint.'],
      [5.2, 5.38, ' Thank you.'],
    ]),
    5.38,
  );
  assert.deepEqual(
    trimmed.segments.map((s) => s.text),
    [' He began a confused complaint.', ' The horizon.'],
  );
});

test('a segment with text but no duration after another is a run-on: a live final keeps what came before it', () => {
  const ranOn = result([
    [0, 2, '我的朋友在北京大学学习历史'],
    [2, 2, '我的朋友在北京大学学'],
    [2, 2.5, '歷史'],
  ]);
  assert.equal(looksRunOn(ranOn, 2.93), true);
  assert.deepEqual(
    withoutRunOn(ranOn, 2.93).segments.map((s) => s.text),
    ['我的朋友在北京大学学习历史'],
  );
  assert.equal(
    looksRunOn(
      result([
        [0, 0, ' Oh.'],
        [0.4, 2, ' I see.'],
      ]),
      2.5,
    ),
    false,
  );
});

test('a segment starting where the audio has ended is a run-on', () => {
  assert.equal(
    looksRunOn(
      result([
        [0, 4.8, ' He began a complaint.'],
        [4.9, 6.2, ' Against the wizard.'],
      ]),
      5,
    ),
    true,
  );
});

const quilter = 'Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.';

test('compression ratio: one sentence said over and over is a loop, ordinary speech and a sentence said twice are not', () => {
  assert.ok(compressionRatio(Array(9).fill(quilter).join(' ')) > compressionRatioThreshold);
  assert.ok(
    compressionRatio(' And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country.') <
      compressionRatioThreshold,
  );
  assert.ok(compressionRatio(`${quilter} ${quilter}`) < compressionRatioThreshold);
  assert.ok(compressionRatio('甚至出现交易几乎停滞的情况') < compressionRatioThreshold);
  assert.equal(compressionRatio(''), 0);
});

test('a prompted decoding that loops is decoded again without the prompt (real audio: a prompt of one sentence repeated makes whisper copy it)', async () => {
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads: 2,
    encoderPath: await whisperBaseEncoderPath(),
  });
  const samples = (
    await decodeFile(path.join(evalDir, 'asr/faster_whisper/stereo_diarization_left.wav'), { sampleRate: 16000, channels: 1 })
  ).samples;
  const result = await transcriber.transcribe(samples, { language: 'en', prompt: Array(8).fill(quilter).join(' '), temperature: 0 });
  const text = result.segments.map((s) => s.text).join('');
  assert.equal(result.temperature, 0, text);
  assert.ok(compressionRatio(text) <= compressionRatioThreshold, text);
  assert.match(text, /complaint against the wizard/);
  assert.doesNotMatch(text, /Quilter/);
});

const repeated = Array(3).fill(' It was my reports from the north. The horizon seems extremely distant.').join('');
const at = (text: string, temperature: number): WhisperResult => ({ ...result([[0, 5, text]]), temperature });

test('repetition is a loop when a prompt or sampling could have made it up, not from beam search without a prompt', () => {
  assert.ok(compressionRatio(repeated) > compressionRatioThreshold);
  assert.equal(loops(at(repeated, 0), true), true);
  assert.equal(loops(at(repeated, 0.2), false), true);
  // Beam search at temperature 0 without a prompt has nothing to copy: the audio says it three times.
  assert.equal(loops(at(repeated, 0), false), false);
  assert.equal(loops(at(quilter, 0.4), true), false);
});

test("a decoding pass of a 1 s clip may run to 55 tokens (whisper.cpp drops loops only over 32), from 12 s on to whisper.cpp's own 220", () => {
  assert.equal(maxTokens(1), 55);
  assert.ok(maxTokens(0.3) > 32);
  assert.ok(maxTokens(12) >= 220);
});

test('a 1 s clip whose beam-search decoding is improbable: the fallback keeps the sample that does not loop', async () => {
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads: 2,
    encoderPath: await whisperBaseEncoderPath(),
  });
  const samples = (await decodeFile(path.join(evalDir, 'asr/deepspeech/LDC93S1.wav'), { sampleRate: 16000, channels: 1 })).samples.subarray(
    0,
    16000,
  );
  const result = await transcriber.transcribe(samples, { language: 'en', temperature: 0 });
  const text = result.segments.map((s) => s.text).join('');
  assert.ok(result.temperature > 0, `accepted at ${result.temperature}`);
  assert.ok(compressionRatio(text) <= compressionRatioThreshold, text);
  assert.match(text, /^ She had/);
});

test("with its ONNX encoder the engine says so and transcribes as with whisper.cpp's own", async () => {
  const modelPath = await modelFile('whisper-base', 'ggml-base.bin');
  const encoderPath = await modelFile('whisper-base-encoder', 'encoder.onnx');
  const onnx = await WhisperCppTranscriber.load(modelPath, { modelId: 'whisper-base', threads: 2, encoderPath });
  const ggml = await WhisperCppTranscriber.load(modelPath, { modelId: 'whisper-base', threads: 2 });
  assert.equal(onnx.encoder, 'onnxruntime');
  assert.equal(ggml.encoder, 'whisper.cpp');
  const samples = (await decodeFile(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'), { sampleRate: 16000, channels: 1 })).samples;
  const text = async (transcriber: WhisperCppTranscriber): Promise<string> =>
    (await transcriber.transcribe(samples, { language: 'en', temperature: 0 })).segments
      .map((s) => s.text)
      .join('')
      .trim();
  assert.equal(
    await text(onnx),
    'And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country.',
  );
  assert.match(
    await text(ggml),
    /^And so, my fellow Americans, ask not what your country can do for you, ?ask what you can do for your country\.$/,
  );
  await onnx.close();
});

test('words DTW put outside their segment, or at one instant, are spread over the segment (issue 35); others keep their DTW times', () => {
  const word = (text: string, startSeconds: number) => ({ text, startSeconds, endSeconds: startSeconds, probability: 0.9 });
  const outside = wordsWithinSegment([word(' It', 9.2), word(' is', 9.5), word(' me', 9.9)], 0, 4.5);
  assert.deepEqual(
    outside.map((w) => [w.startSeconds, w.endSeconds]),
    [
      [0, 1.5],
      [1.5, 3],
      [3, 4.5],
    ],
  );
  const stacked = wordsWithinSegment(
    [word(' It', 13.4), word(' was', 17), word(' mine.', 17), word(' Yes', 17), word(' no.', 17)],
    13.4,
    18.2,
  );
  assert.ok(stacked.every((w, i) => i === 0 || w.startSeconds > stacked[i - 1]!.startSeconds));
  const fine = [word(' It', 0.3), word(' was', 0.6), word(' mine.', 0.9)];
  assert.deepEqual(wordsWithinSegment(fine, 0, 4.5), fine);
});
