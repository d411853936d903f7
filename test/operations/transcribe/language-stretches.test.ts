import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  assignLanguages,
  type LanguageStretch,
  majorityLanguage,
  splitByLanguage,
} from '../../../src/operations/transcribe/language-stretches.js';

const stretch = (startSeconds: number, endSeconds: number, probabilities?: Record<string, number>, speaker: string | null = null) => ({
  startSeconds,
  endSeconds,
  speaker,
  ...(probabilities ? { probabilities } : {}),
});

describe('assignLanguages', () => {
  test("each stretch keeps a language it is sure of, even against the recording's majority", () => {
    const stretches: LanguageStretch[] = [
      stretch(0, 6, { en: 0.99, es: 0.005, pt: 0.005 }),
      stretch(7, 12, { en: 0.99, es: 0.005, pt: 0.005 }),
      stretch(13, 17, { es: 0.97, en: 0.02, pt: 0.01 }),
    ];
    assert.deepEqual(assignLanguages(stretches, { recording: 0.5, speaker: 0.5 }), ['en', 'en', 'es']);
  });

  test("an unsure stretch leans to the languages the recording holds; with diarization, to its speaker's", () => {
    const stretches: LanguageStretch[] = [
      stretch(0, 4, { es: 0.98, pt: 0.01, it: 0.01 }, 'A'),
      stretch(5, 9, { it: 0.95, es: 0.04, pt: 0.01 }, 'B'),
      // Said by A, whose other turn is Spanish; on its own audio Portuguese is a little ahead.
      stretch(10, 12, { pt: 0.45, es: 0.3, it: 0.25 }, 'A'),
    ];
    assert.equal(assignLanguages(stretches, { recording: 0, speaker: 0 })[2], 'pt');
    assert.equal(assignLanguages(stretches, { recording: 0, speaker: 1 })[2], 'es');
    assert.equal(assignLanguages(stretches, { recording: 1, speaker: 0 })[2], 'es');
  });

  test('a stretch too short to detect on takes the language of the nearest detected stretch', () => {
    const stretches: LanguageStretch[] = [
      stretch(0, 5, { en: 0.99, es: 0.01 }),
      stretch(6, 12, { es: 0.95, en: 0.05 }),
      stretch(12.5, 13),
      stretch(5.2, 5.5),
    ];
    assert.deepEqual(assignLanguages(stretches, { recording: 0.5, speaker: 0.5 }), ['en', 'es', 'es', 'en']);
  });
});

describe('splitByLanguage', () => {
  const pads = { padBeforeSeconds: 1.5, padAfterSeconds: 0.4 };

  test('a padded segment of one language is kept whole', () => {
    const segments = [{ startSeconds: 0, endSeconds: 10 }];
    const stretches = [
      { startSeconds: 1.5, endSeconds: 4, language: 'en' },
      { startSeconds: 4.5, endSeconds: 9.6, language: 'en' },
    ];
    assert.deepEqual(splitByLanguage(segments, stretches, pads), [{ startSeconds: 0, endSeconds: 10, language: 'en' }]);
  });

  test("cut between two languages, each part padded but never into the other's speech", () => {
    const segments = [{ startSeconds: 0, endSeconds: 12 }];
    const stretches = [
      { startSeconds: 1.5, endSeconds: 5, language: 'en' },
      { startSeconds: 5.6, endSeconds: 11.6, language: 'es' },
    ];
    assert.deepEqual(splitByLanguage(segments, stretches, pads), [
      { startSeconds: 0, endSeconds: 5.4, language: 'en' },
      { startSeconds: 5, endSeconds: 12, language: 'es' },
    ]);
  });

  test('the majority language is the one with the most speech', () => {
    assert.equal(
      majorityLanguage([
        { startSeconds: 0, endSeconds: 3, language: 'en' },
        { startSeconds: 4, endSeconds: 6, language: 'es' },
        { startSeconds: 7, endSeconds: 9, language: 'es' },
      ]),
      'es',
    );
  });
});
