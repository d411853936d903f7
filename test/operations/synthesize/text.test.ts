import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EnglishLexicon } from '../../../src/operations/synthesize/engines/english-lexicon.js';
import { kokoroPhonemes } from '../../../src/operations/synthesize/engines/kokoro-phonemes.js';
import { normalizeText } from '../../../src/operations/synthesize/text/normalize.js';
import {
  endsSentence,
  joinPieces,
  splitClauses,
  splitFirstSentence,
  splitOpenSentence,
  splitSentences,
} from '../../../src/operations/synthesize/text/sentences.js';
import { modelFile } from '../../helpers/models.js';

describe('text normalisation', () => {
  const cases: Array<[string, string, string]> = [
    [
      'en-us',
      'Dr. Smith paid $1,234.50 on 2024-03-15 at 10:05.',
      'Doctor Smith paid one thousand two hundred thirty-four dollars and fifty cents on March fifteenth, twenty twenty-four at ten oh five.',
    ],
    ['en-us', 'In 1999, 12.5% of the 3rd group left.', 'In nineteen ninety-nine, twelve point five percent of the third group left.'],
    ['en-gb', 'Mr. Brown earned £20 on 15/03/2024.', 'Mister Brown earned twenty pounds on the fifteenth of March twenty twenty-four.'],
    [
      'es',
      'El Sr. García pagó 1.234,50 € el 15/03/2024.',
      'El señor García pagó mil doscientos treinta y cuatro euros cincuenta céntimos el quince de marzo de dos mil veinticuatro.',
    ],
    ['fr', 'Mme Dupont a payé 25 € le 01/05/2023.', 'Madame Dupont a payé vingt-cinq euros le premier mai deux mille vingt-trois.'],
    ['it', 'Il Sig. Rossi ha 42 anni.', 'Il signor Rossi ha quarantadue anni.'],
    ['pt-br', 'O Sr. Silva pagou R$ 16,50.', 'O senhor Silva pagou dezesseis reais cinquenta centavos.'],
    ['zh', '价格是¥25.5，增长了30%。', '价格是二十五元五十分，增长了百分之三十。'],
    ['ja', '10:30に1,500円です。', '十時三十分に千五百円です。'],
    ['de', 'Ich habe 42 Äpfel.', 'Ich habe 42 Äpfel.'],
  ];
  for (const [language, input, expected] of cases)
    test(`${language}: ${input}`, () => assert.equal(normalizeText(input, language), expected));
});

describe('sentences and clauses', () => {
  test('splits at sentence ends, including CJK, and keeps quotes with their sentence', () => {
    assert.deepEqual(splitSentences('Hello there. How are you? I am "fine." 你好。再见！'), [
      'Hello there.',
      'How are you?',
      'I am "fine."',
      '你好。',
      '再见！',
    ]);
    assert.deepEqual(splitClauses('First, second; third'), ['First,', 'second;', 'third']);
  });
  test("the sentence open at a text's end and the end of the one open at its start (where phonemes join their sentence)", () => {
    assert.deepEqual(splitOpenSentence('I work there. My cat is called '), ['I work there.', 'My cat is called ']);
    assert.deepEqual(splitOpenSentence('I work there.'), ['I work there.', '']);
    assert.deepEqual(splitOpenSentence('my cat '), ['', 'my cat ']);
    assert.deepEqual(splitFirstSentence(', and he purrs. Then he sleeps.'), [', and he purrs.', 'Then he sleeps.']);
    assert.deepEqual(splitFirstSentence('.'), ['.', '']);
    assert.deepEqual(splitFirstSentence(' is here'), [' is here', '']);
    assert.ok(endsSentence('He said "yes." ') && !endsSentence('He said'));
    assert.equal(joinPieces(['My cat is called ', 'bread', '.']), 'My cat is called bread.');
    assert.equal(joinPieces(['bread', ', and', ' ']), 'bread, and');
  });
});

describe('Kokoro phonemes', () => {
  test('English follows misaki conventions (diphthong letters, ɹ, T flaps, ʤ)', async () => {
    assert.equal(
      await kokoroPhonemes('The brown fox jumps over the lazy dog, hey!', 'en-us'),
      'ðə bɹˈWn fˈɑks ʤˈʌmps ˌOvəɹ ðə lˈAzi dˈɑɡ, hˈA!',
    );
    assert.match(await kokoroPhonemes('water', 'en-us'), /wˈɔTəɹ/);
  });
  test('Japanese reads kanji through kuromoji pronunciations (particles as spoken)', async () => {
    assert.equal(await kokoroPhonemes('私は学生です。', 'ja'), 'wataɕi wa ɡakɯᵝsei desɯᵝ.');
  });
  test('Mandarin uses pinyin with tone arrows', async () => {
    assert.equal(await kokoroPhonemes('我们去北京。', 'zh'), 'wo↓mənʨʰy↘pei↓ʨiŋ→.');
  });
  test('Latin-script words in Chinese are read as English, not dropped', async () => {
    const english = await kokoroPhonemes('Python', 'en-us');
    assert.ok(english.length > 0);
    assert.equal(await kokoroPhonemes('Python', 'zh'), english);
    assert.equal(await kokoroPhonemes('我用Python。', 'zh'), `wo↓jʊŋ↘ ${english}.`);
    // Several Latin words, each followed by punctuation, keep their order and their pauses.
    const words = await Promise.all(['Rust', 'Go'].map((w) => kokoroPhonemes(w, 'en-us')));
    assert.equal(await kokoroPhonemes('我用Python、Rust和Go！', 'zh'), `wo↓jʊŋ↘ ${english}, ${words[0]} xɤ↗ ${words[1]}!`);
  });
});

describe('Kokoro phonemes: English words from the misaki lexicon', () => {
  let loaded: Promise<{ us: EnglishLexicon; gb: EnglishLexicon }> | undefined;
  const lexicons = (): Promise<{ us: EnglishLexicon; gb: EnglishLexicon }> =>
    (loaded ??= modelFile('misaki-lexicon', '').then(async (dir) => ({
      us: await EnglishLexicon.load(dir, 'us'),
      gb: await EnglishLexicon.load(dir, 'gb'),
    })));
  test('known words are read as the lexicon writes them, where espeak-ng differs (issue 20: "downtown")', async () => {
    const options = { lexicons: await lexicons() };
    assert.equal(
      await kokoroPhonemes('Book a table for two at the new place downtown tonight.', 'en-us', options),
      'bˈʊk ɐ tˈAbᵊl fɔɹ tˈu æt ðə nˈu plˈAs dˌWntˈWn tənˈIt.',
    );
    assert.match(await kokoroPhonemes('downtown', 'en-us'), /dˈWntWn/);
    assert.equal(await kokoroPhonemes('water', 'en-us', options), 'wˈɔTəɹ');
    assert.equal(await kokoroPhonemes('tomato', 'en-gb', options), 'təmˈɑːtQ');
  });
  test('"the", "to" and "an" follow the sound after them; phrase-final forms at the end of a clause', async () => {
    const options = { lexicons: await lexicons() };
    assert.equal(await kokoroPhonemes('the apple, the pear', 'en-us', options), 'ði ˈæpᵊl, ðə pˈɛɹ');
    assert.equal(await kokoroPhonemes('to eat, to go, to', 'en-us', options), 'tʊ ˈit, tə ɡˌO, tu');
    assert.equal(await kokoroPhonemes('I can be there.', 'en-us', options), 'ˌI kæn bi ðˈɛɹ.');
    assert.equal(await kokoroPhonemes('it can be', 'en-us', options), 'ɪt kæn bˈi');
  });
  test('a word of no telling sound passes on what follows it (issue 32: "have a pen" as misaki reads it)', async () => {
    const options = { lexicons: await lexicons() };
    assert.equal(await kokoroPhonemes('Do you have a pen?', 'en-us', options), 'dˈu ju hæv ɐ pˈɛn?');
    assert.equal(await kokoroPhonemes('What do you have?', 'en-us', options), 'wˌʌt dˈu ju hˈæv?');
  });
  test('words read differently by part of speech take the reading of their tag (issue 32: "Please close")', async () => {
    const options = { lexicons: await lexicons() };
    assert.equal(await kokoroPhonemes('Please close the door.', 'en-us', options), 'plˈiz klˈOz ðə dˈɔɹ.');
    assert.equal(await kokoroPhonemes('The shop is close to the station.', 'en-us', options), 'ðə ʃˈɑp ɪz klˈOs tə ðə stˈAʃən.');
    assert.equal(
      await kokoroPhonemes('We use it daily; the use of it is clear.', 'en-us', options),
      'wˌi jˈuz ɪt dˈAli; ðə jˈus ʌv ɪt ɪz klˈɪɹ.',
    );
    assert.equal(await kokoroPhonemes('Please close the door.', 'en-gb', options), 'plˈiːz klˈQz ðə dˈɔː.');
  });
  test('capitals, acronyms and -s/-ed/-ing of known stems', async () => {
    const options = { lexicons: await lexicons() };
    assert.equal(await kokoroPhonemes('USB', 'en-us', options), 'jˌuˌɛsbˈi');
    assert.equal(await kokoroPhonemes('aardvarking abboted', 'en-us', options), 'ˈɑɹdvˌɑɹkɪŋ ˈæbəTᵻd');
  });
  test('words the lexicon does not know are read by espeak-ng in place', async () => {
    const options = { lexicons: await lexicons() };
    const unknown = await kokoroPhonemes('Zorblax Quuxington', 'en-us');
    assert.equal(await kokoroPhonemes('the Zorblax Quuxington', 'en-us', options), `ðə ${unknown}`);
  });
});
