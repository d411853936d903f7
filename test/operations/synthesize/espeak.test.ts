import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { EspeakSynthesizer } from '../../../src/operations/synthesize/engines/espeak.js';
import { assertEmotionDirections, collect, measure } from '../../helpers/tts.js';

describe('espeak-ng engine', () => {
  let espeak: EspeakSynthesizer;
  before(async () => {
    espeak = await EspeakSynthesizer.load();
  });

  test('offers one voice per language, over 100 languages', () => {
    assert.ok(espeak.languages().length >= 100, `${espeak.languages().length} languages`);
    assert.ok(espeak.voices().length >= 100, `${espeak.voices().length} voices`);
    assert.equal(new Set(espeak.voices().map((v) => v.id)).size, espeak.voices().length);
    assert.ok(espeak.languages().includes('de') && espeak.languages().includes('sw'));
    assert.equal(espeak.resolve('fr'), 'fr-fr', 'a bare code resolves to its regional voice');
  });

  for (const [language, text] of [
    ['de', 'Guten Morgen! Heute fahren wir mit 12 Freunden nach Berlin.'],
    ['sw', 'Habari ya asubuhi. Leo tunakwenda sokoni pamoja.'],
  ] as const) {
    test(`${language}: non-silent 24 kHz speech of plausible length`, async () => {
      const audio = await collect(espeak.synthesize({ text, language, voice: { id: `espeak-${language}` } }));
      const m = measure(audio.samples, audio.sampleRate);
      assert.equal(audio.sampleRate, 24000);
      assert.equal(audio.chunks, 2);
      const words = text.split(/\s+/).length + 2;
      assert.ok(m.durationSeconds > words * 0.2 && m.durationSeconds < words * 0.8, `duration ${m.durationSeconds} s for ~${words} words`);
      assert.ok(m.activeRmsDb > -35, `level ${m.activeRmsDb} dB`);
    });
  }

  test('voice variants change the voice', async () => {
    const text = 'Guten Morgen, wie geht es dir?';
    const male = measure((await collect(espeak.synthesize({ text, language: 'de', voice: { id: 'espeak-de' } }))).samples, 24000);
    const female = measure((await collect(espeak.synthesize({ text, language: 'de', voice: { id: 'espeak-de+f3' } }))).samples, 24000);
    assert.ok(female.medianHz > male.medianHz * 1.3, `f3 ${female.medianHz} Hz vs default ${male.medianHz} Hz`);
  });

  test('every emotion moves F0, rate and energy in its documented direction', async () => {
    await assertEmotionDirections(espeak, {
      text: 'Ich hätte nie gedacht, dich heute hier zu sehen. Was für ein Tag das war!',
      language: 'de',
      voice: { id: 'espeak-de' },
    });
  });

  test('blends and style vectors are refused with a clear error', async () => {
    await assert.rejects(
      collect(espeak.synthesize({ text: 'Hallo', language: 'de', voice: { style: new Float32Array(256) } })),
      /cannot be blended/,
    );
  });
});
