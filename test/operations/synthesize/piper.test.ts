/** The Piper engine on a real voice (joe, US English, medium): phoneme ids, audio, streaming, speed, abort, round trip. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { errorRate } from '../../../bench/lib/wer.js';
import { resample } from '../../../src/audio/resample.js';
import { type PiperSynthesizer, splitJoinedWords, wordGroups } from '../../../src/operations/synthesize/engines/piper.js';
import { WhisperCppTranscriber } from '../../../src/operations/transcribe/engines/whisper-cpp.js';
import { modelFile, whisperBaseEncoderPath } from '../../helpers/models.js';
import { collect, joeModelId, joeVoiceId, loadPiper, measure, modelManager } from '../../helpers/tts.js';

const sentences = 'The weather is lovely today, so we will walk to the market. Do you want to come along? It opens early: at eight.';

describe('Piper engine on joe (real model)', () => {
  let piper: PiperSynthesizer;
  /** joe's phoneme_id_map, as its config has it. */
  let idMap: Record<string, number[]>;
  before(async () => {
    piper = await loadPiper();
    const dir = await modelManager().require(joeModelId);
    idMap = (
      JSON.parse(await readFile(path.join(dir, 'en_US-joe-medium.onnx.json'), 'utf8')) as { phoneme_id_map: Record<string, number[]> }
    ).phoneme_id_map;
  });
  after(async () => piper?.close());

  test('one voice in US English; a bare `en` is its language, other languages are not', { timeout: 10_000 }, () => {
    assert.deepEqual(
      piper.voices().map((v) => [v.id, v.engine, v.languages]),
      [[joeVoiceId, 'piper', ['en-us']]],
    );
    assert.deepEqual(piper.languages(), ['en-us']);
    assert.equal(piper.speaks('en'), 'en-us');
    assert.equal(piper.speaks('EN-US'), 'en-us');
    assert.equal(piper.speaks('en-gb'), undefined);
    assert.equal(piper.speaks('de'), undefined);
    assert.equal(piper.voiceFor('en-us'), joeVoiceId);
    assert.equal(piper.voiceFor('en-us', 'af_heart'), joeVoiceId);
  });

  test("phoneme ids have Piper's framing (^ _, each phoneme then _, $) and are the same every time", { timeout: 30_000 }, async () => {
    const [bos, pad, eos] = [idMap['^']![0], idMap._![0], idMap.$![0]];
    const pieces = await piper.phonemes(sentences, joeVoiceId);
    // One piece per sentence; each keeps its punctuation as phonemes (a comma or colon with a space after it).
    assert.equal(pieces.length, 3);
    assert.match(pieces[0]!.join(''), /^[^,]+, [^,]+\.$/);
    assert.match(pieces[1]!.join(''), /\?$/);
    assert.match(pieces[2]!.join(''), /^[^:]+: [^:]+\.$/);
    for (const phonemes of pieces) {
      const ids = piper.ids(phonemes, joeVoiceId);
      assert.equal(ids.length, 2 * phonemes.length + 3, 'every phoneme of joe has one id');
      assert.equal(ids[0], bos);
      assert.equal(ids.at(-1), eos);
      for (let i = 1; i < ids.length - 1; i += 2) assert.equal(ids[i], pad, `pad at ${i}`);
      for (let i = 2; i < ids.length - 1; i += 2) assert.deepEqual([ids[i]], idMap[phonemes[i / 2 - 1]!], `phoneme ${i / 2 - 1}`);
    }
    assert.deepEqual(await piper.phonemes(sentences, joeVoiceId), pieces);
    // Code points after NFD: a letter with a diacritic is two phonemes, as Piper splits them.
    assert.ok(pieces.flat().every((phoneme) => [...phoneme].length === 1));
  });

  test('an English sentence: non-silent speech of plausible length at 22.05 kHz', { timeout: 60_000 }, async () => {
    const text = 'The library opens early in the morning and closes late on Fridays.';
    const audio = await collect(piper.synthesize({ text, language: 'en-us', voice: { id: joeVoiceId } }));
    const m = measure(audio.samples, audio.sampleRate);
    assert.equal(audio.sampleRate, 22050);
    const words = text.split(/\s+/).length;
    assert.ok(m.durationSeconds > words * 0.2 && m.durationSeconds < words * 0.7, `duration ${m.durationSeconds} s for ${words} words`);
    assert.ok(m.activeRmsDb > -35, `level ${m.activeRmsDb} dB`);
    assert.ok(m.voicedFraction > 0.3, `voiced fraction ${m.voicedFraction}`);
  });

  test('streamed sentence by sentence, as long as the whole text in one run', { timeout: 60_000 }, async (t) => {
    const streamed = await collect(piper.synthesize({ text: sentences, language: 'en-us', voice: { id: joeVoiceId } }));
    assert.equal(streamed.chunks, 3);
    const whole = (await piper.phonemes(sentences, joeVoiceId)).flatMap((phonemes, i) => (i > 0 ? [' ', ...phonemes] : phonemes));
    const oneRun = await piper.run(joeVoiceId, piper.ids(whole, joeVoiceId));
    const ratio = streamed.samples.length / oneRun.length;
    t.diagnostic(
      `streamed ${streamed.samples.length} samples in ${streamed.chunks} chunks, one run ${oneRun.length} (x${ratio.toFixed(3)})`,
    );
    assert.ok(Math.abs(ratio - 1) < 0.08, `streamed ${streamed.samples.length} samples, one run ${oneRun.length} (x${ratio.toFixed(3)})`);
  });

  test('speed 1.5 speaks faster; an excited delivery is faster and louder than a sad one', { timeout: 120_000 }, async () => {
    const text = 'Please remember to bring your umbrella, because it may rain this afternoon.';
    const speak = async (options: { speed?: number; emotion?: 'excited' | 'sad' }) => {
      const audio = await collect(piper.synthesize({ text, language: 'en-us', voice: { id: joeVoiceId }, ...options }));
      return measure(audio.samples, audio.sampleRate);
    };
    const normal = await speak({});
    const fast = await speak({ speed: 1.5 });
    const ratio = fast.durationSeconds / normal.durationSeconds;
    assert.ok(ratio > 0.55 && ratio < 0.8, `speed 1.5: x${ratio.toFixed(2)} the duration`);
    const [excited, sad] = [await speak({ emotion: 'excited' }), await speak({ emotion: 'sad' })];
    assert.ok(excited.durationSeconds < sad.durationSeconds, `excited ${excited.durationSeconds} s, sad ${sad.durationSeconds} s`);
    assert.ok(excited.activeRmsDb > sad.activeRmsDb + 4, `excited ${excited.activeRmsDb} dB, sad ${sad.activeRmsDb} dB`);
  });

  test('an abort stops the speech after the piece under way', { timeout: 60_000 }, async () => {
    const controller = new AbortController();
    const chunks: string[] = [];
    await assert.rejects(async () => {
      for await (const chunk of piper.synthesize({
        text: sentences,
        language: 'en-us',
        voice: { id: joeVoiceId },
        signal: controller.signal,
      })) {
        chunks.push(chunk.text);
        controller.abort();
      }
    }, /abort/i);
    assert.equal(chunks.length, 1);
    const aborted = AbortSignal.abort();
    await assert.rejects(
      collect(piper.synthesize({ text: sentences, language: 'en-us', voice: { id: joeVoiceId }, signal: aborted })),
      /abort/i,
    );
  });

  test('blends, style vectors and another language are refused', { timeout: 10_000 }, async () => {
    await assert.rejects(collect(piper.synthesize({ text: 'Hi.', language: 'en-us', voice: { blend: [{ id: joeVoiceId, weight: 1 }] } })), {
      code: 'unsupported_value',
    });
    await assert.rejects(collect(piper.synthesize({ text: 'Hallo.', language: 'de', voice: { id: joeVoiceId } })), {
      code: 'unsupported_value',
    });
    await assert.rejects(collect(piper.synthesize({ text: 'Hi.', language: 'en-us', voice: { id: 'piper-en_US-nobody-medium' } })), {
      code: 'not_found',
    });
  });
});

/**
 * Round trip as the TTS bench measures it: joe's speech of eval-like sentences transcribed by our transcription (whisper
 * base, the service's encoder, greedy, language given).
 */
describe('Piper joe round trip through whisper base', () => {
  let piper: PiperSynthesizer;
  let transcriber: WhisperCppTranscriber;
  before(async () => {
    piper = await loadPiper();
    const encoderPath = await whisperBaseEncoderPath();
    transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
      modelId: 'whisper-base',
      threads: 2,
      ...(encoderPath ? { encoderPath } : {}),
    });
  });
  after(async () => Promise.all([piper?.close(), transcriber?.close()]));

  test('four sentences are heard with a low word error rate', { timeout: 300_000 }, async (t) => {
    const texts = [
      'The library opens early in the morning and closes late on Fridays.',
      'Please remember to bring your umbrella, because it may rain this afternoon.',
      'She finished the report before lunch and sent it to the whole team.',
      'Our flight was delayed by two hours, so we missed the connection in Chicago.',
    ];
    let errors = 0;
    let words = 0;
    const heard: string[] = [];
    for (const text of texts) {
      const audio = await collect(piper.synthesize({ text, language: 'en-us', voice: { id: joeVoiceId } }));
      const speech = await resample({ samples: audio.samples, sampleRate: audio.sampleRate, channels: 1 }, 16000);
      const transcript = (await transcriber.transcribe(speech.samples, { language: 'en', temperature: 0 })).segments
        .map((s) => s.text)
        .join(' ')
        .trim();
      const rate = errorRate(text, transcript, 'en');
      errors += rate.errors;
      words += rate.referenceLength;
      heard.push(transcript);
    }
    t.diagnostic(`WER ${(errors / words).toFixed(3)} over ${words} words: ${heard.join(' | ')}`);
    assert.ok(errors / words <= 0.05, `WER ${(errors / words).toFixed(3)}: ${heard.join(' | ')}`);
  });
});

describe('Piper word groups (word timestamps)', () => {
  const idMap = new Map<string, number[]>([
    ['^', [1]],
    ['_', [0]],
    ['$', [2]],
    [' ', [3]],
    ['.', [4]],
    ...[...'hiʌvðə'].map((phoneme, i): [string, number[]] => [phoneme, [10 + i]]),
  ]);

  test("a word's phonemes between spaces, at their ids' positions; punctuation is no word", () => {
    // ^ _ h _ i _ ␠ _ ʌ _ v _ ð _ ə _ . _ $
    assert.deepEqual(wordGroups([...'hi ʌvðə.'], idMap), [
      { phonemeIds: [2, 4], endId: 6 },
      { phonemeIds: [8, 10, 12, 14], endId: 16 },
    ]);
  });

  test('words espeak-ng joined are cut apart by their own phoneme counts', () => {
    const groups = wordGroups([...'hi ʌvðə.'], idMap);
    assert.deepEqual(splitJoinedWords(groups, [2, 2, 2]), [
      { phonemeIds: [2, 4], endId: 6 },
      { phonemeIds: [8, 10], endId: 12 },
      { phonemeIds: [12, 14], endId: 16 },
    ]);
    // More groups than words: nothing to cut.
    assert.equal(splitJoinedWords(groups, [4]), undefined);
  });
});
