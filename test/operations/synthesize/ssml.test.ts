/** SSML and pronunciation rules -> speech segments (issue 39): every element, the errors with their positions. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VoxError } from '../../../src/core/errors.js';
import type { PronunciationRule } from '../../../src/lexicons/contract.js';
import { applyPronunciationRules, isSsml, parseSsml, plainSpeech, spokenText } from '../../../src/operations/synthesize/text/ssml.js';
import { ipaToEspeak, xsampaToIpa } from '../../../src/operations/synthesize/text/phonemes.js';

const fails = (ssml: string, message: RegExp): void =>
  assert.throws(
    () => parseSsml(ssml),
    (error: unknown) => error instanceof VoxError && error.status === 400 && error.param === 'text' && message.test(error.message),
  );

describe('SSML to segments', () => {
  test('a <speak> document is SSML; plain text is one text segment', () => {
    assert.ok(isSsml('<speak>Hi</speak>'));
    assert.ok(isSsml('  <?xml version="1.0"?><speak xml:lang="en-US">Hi</speak>'));
    assert.ok(!isSsml('Say <speak> to me'));
    assert.deepEqual(plainSpeech('Hello there.').segments, [{ kind: 'text', text: 'Hello there.', rate: 1, volumeDb: 0 }]);
  });

  test('break, sub, phoneme, mark, say-as, p and s', () => {
    const { segments, warnings } = parseSsml(
      '<speak><p><s>I work at <sub alias="World Wide Web Consortium">W3C</sub>.</s></p><break time="1.5s"/>' +
        '<mark name="here"/>My cat <phoneme alphabet="ipa" ph="bɹɛd">Zork</phoneme> is <say-as interpret-as="characters">abc</say-as>' +
        ' on <say-as interpret-as="date" format="mdy">3/5/2024</say-as>, call <say-as interpret-as="telephone">555-0199</say-as>.' +
        '<break strength="strong"/><break time="250ms"/></speak>',
    );
    assert.deepEqual(warnings, []);
    assert.deepEqual(
      segments.map((s) => s.kind),
      ['text', 'break', 'mark', 'text', 'phoneme', 'text', 'break', 'break'],
    );
    assert.match((segments[0] as { text: string }).text, /^I work at {2}World Wide Web Consortium\.\n\n/);
    assert.deepEqual(segments[1], { kind: 'break', seconds: 1.5 });
    assert.deepEqual(segments[2], { kind: 'mark', name: 'here' });
    assert.deepEqual(segments[4], { kind: 'phoneme', text: 'Zork', ipa: 'bɹɛd', rate: 1, volumeDb: 0 });
    const after = (segments[5] as { text: string }).text.replace(/\s+/g, ' ');
    assert.equal(after, ' is a b c on March 5th 2024, call 5 5 5, 0 1 9 9.');
    assert.deepEqual(segments.slice(6), [
      { kind: 'break', seconds: 0.8 },
      { kind: 'break', seconds: 0.25 },
    ]);
    // What limits count: the text and substitutions, not the markup.
    assert.ok(spokenText(segments).startsWith('I work at World Wide Web Consortium. My cat Zork is a b c'));
  });

  test('prosody and emphasis set rate, volume and pitch; lang and voice switch the speaker', () => {
    const { segments, warnings } = parseSsml(
      '<speak xml:lang="en-US">One <prosody rate="slow" volume="+6dB" pitch="high">two <emphasis level="strong">three</emphasis></prosody>' +
        ' <lang xml:lang="de">vier</lang> <voice name="am_adam">five</voice> <say-as interpret-as="ordinal">2</say-as></speak>',
    );
    assert.deepEqual(warnings, []);
    const texts = segments.map((s) =>
      s.kind === 'text' ? [s.text.trim(), s.language, s.voiceId, s.rate, s.volumeDb, s.pitchSemitones] : s.kind,
    );
    assert.deepEqual(
      texts,
      [
        ['One', 'en-US', undefined, 1, 0, undefined],
        ['two', 'en-US', undefined, 0.75, 6, 2],
        ['three', 'en-US', undefined, 0.75 * 0.85, 10, 2],
        ['', 'en-US', undefined, 1, 0, undefined],
        ['vier', 'de', undefined, 1, 0, undefined],
        ['', 'en-US', undefined, 1, 0, undefined],
        ['five', 'en-US', 'am_adam', 1, 0, undefined],
        ['2nd', 'en-US', undefined, 1, 0, undefined],
      ].filter(([text]) => text !== ''),
    );
  });

  test('prosody pitch: words, semitones and percentages add up when nested, at most an octave; Hz is a warning', () => {
    const pitchOf = (ssml: string) => parseSsml(ssml).segments.map((s) => (s.kind === 'text' ? s.pitchSemitones : s.kind));
    assert.deepEqual(pitchOf('<speak><prosody pitch="x-low">a</prosody><prosody pitch="-1.5st">b</prosody></speak>'), [-4, -1.5]);
    assert.deepEqual(pitchOf('<speak><prosody pitch="+100%">a</prosody></speak>'), [12]);
    assert.deepEqual(pitchOf('<speak><prosody pitch="+10st">a<prosody pitch="+3st">b</prosody></prosody></speak>'), [10, 12]);
    assert.deepEqual(pitchOf('<speak><prosody pitch="+2st">a<prosody pitch="-2st">b</prosody></prosody></speak>'), [2, undefined]);
    assert.deepEqual(pitchOf('<speak><prosody pitch="-20%">a</prosody></speak>'), [-3.86]);
    const hz = parseSsml('<speak><prosody pitch="+20Hz">a</prosody></speak>');
    assert.deepEqual(
      hz.segments.map((s) => (s.kind === 'text' ? s.pitchSemitones : s.kind)),
      [undefined],
    );
    assert.match(hz.warnings[0]!, /pitch="\+20Hz".*not honoured.*st, % or a word/);
    fails('<speak><prosody pitch="shrill">a</prosody></speak>', /<prosody> pitch 'shrill' is not x-low..x-high/);
  });

  test('errors name the element and its line:column', () => {
    fails('<speak>Hi <blink>there</blink></speak>', /unknown element <blink> \(line 1, column 17\)/);
    fails('<speak>\nA <break time="soon"/></speak>', /<break> time 'soon'.*\(line 2, column 22\)/);
    fails('<speak>A <break time="12s"/></speak>', /longer than 10 s/);
    fails('<speak>A <b>unbalanced</speak>', /unknown element <b>/);
    fails('<speak>A <s>unbalanced</speak>', /not well-formed XML: 1:30: unexpected close tag\. \(<s> is not closed\)/);
    fails('<speak>A <sub>W3C</sub></speak>', /<sub> needs the attribute 'alias'/);
    fails('<speak><phoneme alphabet="arpabet" ph="B R EH D">bread</phoneme></speak>', /alphabet 'arpabet'/);
    fails('<speak><say-as interpret-as="currency">5</say-as></speak>', /interpret-as 'currency'/);
    fails('<voice name="x">Hi</voice>', /root element must be <speak>/);
  });

  test('X-SAMPA becomes IPA; IPA becomes espeak-ng phoneme input', () => {
    assert.equal(xsampaToIpa('br\\Ed'), 'bɹɛd');
    assert.equal(xsampaToIpa('"t_hEst'), 'ˈtʰɛst');
    assert.equal(ipaToEspeak('bɹɛd'), "[[br'Ed]] ");
    assert.equal(ipaToEspeak('ˈtʃeɪnʒ'), "[['tSeInZ]] ");
  });
});

describe('pronunciation rules on segments', () => {
  const rules: PronunciationRule[] = [
    { kind: 'alias', graphemes: ['W3C'], alias: 'World Wide Web Consortium', language: 'en-US' },
    { kind: 'phoneme', graphemes: ['Zork'], phonemes: 'br\\Ed', alphabet: 'x-sampa', language: 'en' },
    { kind: 'alias', graphemes: ['Zork'], alias: 'never', language: 'de' },
  ];

  test('aliases replace whole words, phonemes split the text; case and language must match', () => {
    const segments = applyPronunciationRules(plainSpeech('W3C likes Zork, not zork or Zorkish or W3Cs.').segments, rules, 'en-us');
    assert.deepEqual(
      segments.map((s) => (s.kind === 'phoneme' ? `[${s.text}=${s.ipa}]` : s.kind === 'text' ? s.text : s.kind)),
      ['World Wide Web Consortium likes ', '[Zork=bɹɛd]', ', not zork or Zorkish or W3Cs.'],
    );
    // A German stretch gets the German rule only.
    const german = applyPronunciationRules(parseSsml('<speak><lang xml:lang="de-DE">Zork</lang></speak>').segments, rules, 'en-us');
    assert.deepEqual(
      german.map((s) => (s.kind === 'text' ? s.text : s.kind)),
      ['never'],
    );
  });
});
