/**
 * Our Piper phoneme ids against the reference's (PyPI piper-tts 1.8.0) for joe: test/fixtures/piper-golden-ids.json, made
 * once by scripts/piper-golden-ids.py (the command is in that script).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PiperSynthesizer } from '../../../src/operations/synthesize/engines/piper.js';
import { joeVoiceId, loadPiper } from '../../helpers/tts.js';

interface Golden {
  reference: string;
  sentences: Array<{ text: string; phonemes: string[]; ids: number[][] }>;
}

/**
 * Texts whose phonemes differ from the reference's, and why. Our espeak-ng is Debian's 1.51; piper-tts bundles its own
 * build, which reads some words otherwise. And we speak a long first sentence in two pieces (cut after its first clause,
 * so that audio starts early), where the reference has one run.
 */
const knownDifferences: Record<string, string> = {
  'She finished the report before lunch and sent it to the whole team.': "espeak-ng: 'report', 'before' with oːɹ (ours) for ɔːɹ",
  'The library opens early in the morning and closes late on Fridays.': "espeak-ng: a final i is iʲ in the reference's build",
  'My brother is studying history at a university in the north, and he loves it.':
    "espeak-ng: iʲ in the reference's build; and ours is in two pieces",
  'Could you speak a little more slowly?': "espeak-ng: 'more' with oːɹ (ours) for ɔːɹ",
  'Good luck with the interview tomorrow. Call me when it is over!': "espeak-ng: 'the' before a vowel is ðɪʲ in the reference's build",
};

describe("Piper phoneme ids against the reference's (golden fixture)", () => {
  let piper: PiperSynthesizer;
  let golden: Golden;
  before(async () => {
    piper = await loadPiper();
    golden = JSON.parse(await readFile(path.join(import.meta.dirname, '../../fixtures/piper-golden-ids.json'), 'utf8')) as Golden;
  });
  after(async () => piper?.close());

  test("our framing maps the reference's phonemes to exactly the reference's ids, for every sentence", { timeout: 30_000 }, () => {
    assert.equal(golden.sentences.length, 12);
    for (const { text, phonemes, ids } of golden.sentences)
      for (const [s, sentence] of phonemes.entries()) assert.deepEqual(piper.ids([...sentence], joeVoiceId), ids[s], text);
  });

  test('where our espeak-ng reads a text as the reference does, the ids are the same; every difference is a known one', {
    timeout: 60_000,
  }, async () => {
    const differing: Record<string, string> = {};
    const split: string[] = [];
    for (const { text, phonemes, ids } of golden.sentences) {
      const ours = await piper.phonemes(text, joeVoiceId);
      const oursJoined = ours.map((piece) => piece.join(''));
      if (JSON.stringify(oursJoined) === JSON.stringify(phonemes)) {
        assert.deepEqual(
          ours.map((piece) => piper.ids(piece, joeVoiceId)),
          ids,
          text,
        );
        continue;
      }
      // Only cut in two (a long first sentence): together, the pieces are the reference's sentence, to the id.
      if (phonemes.length === 1 && oursJoined.join('') === phonemes[0]) {
        assert.deepEqual([piper.ids(ours.flat(), joeVoiceId)], ids, text);
        split.push(text);
        continue;
      }
      differing[text] =
        ours.length !== phonemes.length
          ? `pieces: ours ${JSON.stringify(oursJoined)}, reference ${JSON.stringify(phonemes)}`
          : `phonemes: ours ${JSON.stringify(oursJoined)}, reference ${JSON.stringify(phonemes)}`;
    }
    process.stdout.write(
      `# ${golden.sentences.length - Object.keys(differing).length}/${golden.sentences.length} texts with the ids of ${golden.reference} ` +
        `(${split.length} of them spoken in two pieces)\n`,
    );
    for (const [text, difference] of Object.entries(differing)) process.stdout.write(`# ${text}: ${difference}\n`);
    assert.deepEqual(Object.keys(differing).sort(), Object.keys(knownDifferences).sort());
  });
});
