/**
 * SSML and pronunciation rules heard through every engine (issue 39): a <sub> and an alias rule are heard as the alias,
 * "Zork" as <phoneme ph="bɹɛd"> is heard as "bread" (our transcription, whisper base), a 1.5 s break measures 1.5 s of
 * silence; marks have their times; bad SSML is a 400 with its position. One synthesis checks several elements.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parsePcm16Wav } from '../../src/audio/filter.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { pitchStatistics, trackPitch } from '../../src/audio/pitch.js';
import type { Waveform } from '../../src/audio/waveform.js';
import { buildTestApp, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { longestSilence } from '../helpers/silence.js';
import { joeModelId, joeVoiceId } from '../helpers/tts.js';

const ssml =
  '<speak>I work at the <sub alias="World Wide Web Consortium">W3C</sub>.<break time="1.5s"/>' +
  '<mark name="cat"/>My cat is called <phoneme alphabet="ipa" ph="bɹɛd">Zork</phoneme>.</speak>';

describe('SSML through every engine (real models, heard by whisper base)', () => {
  let t: TestApp;
  before(async () => {
    await Promise.all(
      [joeModelId, 'kokoro-82m', 'kokoro-voices', 'misaki-lexicon', 'silero-vad', 'resemblyzer-ge2e', 'whisper-base'].map((id) =>
        modelFile(id, ''),
      ),
    );
    t = await buildTestApp();
  });
  after(async () => t?.close());

  const post = (url: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.key}` }, payload });
  /** What our transcription hears. */
  const heard = async (audio: Waveform): Promise<string> => {
    const wav = await encodeWaveform(audio, { format: 'wav', sampleRate: 16000 });
    const form = multipartBody({ language: 'en', response_format: 'json' }, { file: { filename: 'speech.wav', content: wav } });
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcriptions',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(r.statusCode, 200, r.body);
    return r
      .json<{ text: string }>()
      .text.toLowerCase()
      .replace(/[^a-z' ]+/g, ' ');
  };
  /** The alias and the phonemes are heard, the break measures 1.5 s. */
  const checkSpeech = async (audio: Waveform, engine: string): Promise<{ silence: { seconds: number; endSeconds: number } }> => {
    const text = await heard(audio);
    assert.match(text, /world ?wide web consortium/, `${engine} heard: ${text}`);
    assert.match(text, /\bbread\b/, `${engine} heard: ${text}`);
    assert.doesNotMatch(text, /w3c|zork/, `${engine} heard: ${text}`);
    const silence = longestSilence(audio);
    assert.ok(Math.abs(silence.seconds - 1.5) <= 0.2, `${engine}: the break measured ${silence.seconds} s`);
    return { silence };
  };

  test('Kokoro: sub, phoneme, break, mark with its time (with-timestamps)', { timeout: 400_000 }, async () => {
    const r = await post('/v1/audio/tts/with-timestamps', { text: ssml, voice_id: 'af_heart', format: 'wav' });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['x-voxd-engine'], 'kokoro');
    assert.equal(r.headers['x-voxd-warnings'], undefined);
    const body = r.json<{
      audio_base64: string;
      words: Array<{ word: string; start: number }>;
      marks: Array<{ name: string; time: number }>;
    }>();
    const audio = parsePcm16Wav(Buffer.from(body.audio_base64, 'base64'));
    const { silence } = await checkSpeech(audio, 'kokoro');
    // The mark sits where the break ends; the words are those written (the alias's words, not the markup).
    assert.equal(body.marks.length, 1);
    assert.equal(body.marks[0]!.name, 'cat');
    assert.ok(
      Math.abs(body.marks[0]!.time - silence.endSeconds) < 0.15,
      `mark at ${body.marks[0]!.time} s, break ends ${silence.endSeconds} s`,
    );
    const words = body.words.map((w) => w.word);
    assert.deepEqual(words.slice(0, 7), ['I', 'work', 'at', 'the', 'World', 'Wide', 'Web']);
    assert.ok(words.includes('Zork'));
    assert.ok(body.words.find((w) => w.word === 'My')!.start >= body.marks[0]!.time - 0.05);
  });

  test('Piper: the same through the OpenAI alias (SSML detected by <speak>)', { timeout: 400_000 }, async () => {
    // Piper's VITS samples noise on every run (its graph has no seed), so a word comes out a little different each time
    // ("bread" was heard as "brett" once in a clean-clone run): the text is right when one of two runs is heard as written.
    for (let attempt = 1; ; attempt++) {
      const r = await post('/v1/audio/speech', { input: ssml, voice: joeVoiceId, response_format: 'wav' });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.headers['x-voxd-engine'], 'piper');
      try {
        await checkSpeech(parsePcm16Wav(r.rawPayload), 'piper');
        break;
      } catch (error) {
        if (attempt === 2) throw error;
      }
    }
  });

  test('espeak-ng: the same streamed; <lang> hands a stretch to espeak-ng where Kokoro lacks the language', {
    timeout: 400_000,
  }, async () => {
    const r = await post('/v1/audio/tts', { text: ssml, voice_id: 'espeak-en-us', format: 'wav', stream: true, text_type: 'ssml' });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['x-voxd-engine'], 'espeak');
    await checkSpeech(parsePcm16Wav(r.rawPayload), 'espeak');
    // German in an American Kokoro voice: espeak-ng says it, with a warning; the break after it is still 1.5 s.
    const mixed = await post('/v1/audio/tts', {
      text: '<speak>Good morning. <lang xml:lang="de">Guten Morgen, wie geht es dir?</lang><break time="1.5s"/>How are you?</speak>',
      voice_id: 'af_heart',
      format: 'wav',
    });
    assert.equal(mixed.statusCode, 200, mixed.body);
    assert.match(String(mixed.headers['x-voxd-warnings']), /espeak-ng.*'de'|'de'.*espeak/);
    const audio = parsePcm16Wav(mixed.rawPayload);
    const silence = longestSilence(audio);
    assert.ok(Math.abs(silence.seconds - 1.5) <= 0.2, `espeak-ng (de): the break measured ${silence.seconds} s`);
  });

  test('<prosody pitch>: Kokoro and espeak-ng raise the voice by what is asked; Piper says it cannot', { timeout: 400_000 }, async () => {
    const sentence = 'The weather is lovely today, so we will walk to the market.';
    /** Median F0 of an answer, Hz. */
    const medianHz = (body: Buffer): number => {
      const audio = parsePcm16Wav(body);
      return pitchStatistics(trackPitch(audio.samples, audio.sampleRate)).medianHz;
    };
    for (const voice of ['af_heart', 'espeak-en-us']) {
      const plain = await post('/v1/audio/tts', { text: sentence, voice_id: voice, format: 'wav' });
      const raised = await post('/v1/audio/tts', {
        text: `<speak><prosody pitch="+4st">${sentence}</prosody></speak>`,
        voice_id: voice,
        format: 'wav',
      });
      assert.equal(raised.statusCode, 200, raised.body);
      assert.equal(raised.headers['x-voxd-warnings'], undefined);
      const semitones = 12 * Math.log2(medianHz(raised.rawPayload) / medianHz(plain.rawPayload));
      assert.ok(Math.abs(semitones - 4) <= 1.5, `${voice}: raised by ${semitones.toFixed(2)} st`);
    }
    const piper = await post('/v1/audio/tts', {
      text: `<speak><prosody pitch="high">${sentence}</prosody></speak>`,
      voice_id: joeVoiceId,
      format: 'wav',
    });
    assert.equal(piper.statusCode, 200, piper.body);
    assert.match(String(piper.headers['x-voxd-warnings']), /prosody pitch.*not honoured by piper/);
  });

  test('a pronunciation dictionary: its alias rule and its X-SAMPA phoneme rule are heard as they say', { timeout: 400_000 }, async () => {
    const lexicon = `<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="x-sampa" xml:lang="en-US">
  <lexeme><grapheme>W3C</grapheme><alias>World Wide Web Consortium</alias></lexeme>
  <lexeme><grapheme>Zork</grapheme><phoneme>br\\Ed</phoneme></lexeme>
</lexicon>`;
    const form = multipartBody({ name: 'Names' }, { file: { filename: 'names.pls', content: Buffer.from(lexicon) } });
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/pronunciation-dictionaries',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(created.statusCode, 201, created.body);
    const r = await post('/v1/audio/tts', {
      text: 'I work at the W3C. My cat is called Zork.',
      voice_id: 'af_heart',
      format: 'wav',
      pronunciation_dictionary_ids: [created.json().id],
    });
    assert.equal(r.statusCode, 200, r.body);
    const text = await heard(parsePcm16Wav(r.rawPayload));
    assert.match(text, /world ?wide web consortium/, text);
    assert.match(text, /\bbread\b/, text);
  });

  test('OpenAPI: text_type and the SSML elements on /v1/audio/tts, SSML on the OpenAI alias, marks in the timestamps answer', async () => {
    /** The document, walked by keys. */
    type Node = { [key: string]: Node } & { enum?: string[]; description?: string };
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<Node>();
    const body = (route: string): Node => doc.paths![route]!.post!.requestBody!.content!['application/json']!.schema!.properties!;
    const tts = body('/v1/audio/tts');
    assert.deepEqual(tts.text_type!.enum, ['text', 'ssml']);
    assert.match(String(tts.text!.description), /<speak>.*break.*phoneme.*say-as.*mark/);
    assert.match(String(body('/v1/audio/speech').input!.description), /SSML/);
    const timed = doc.paths!['/v1/audio/tts/with-timestamps']!.post!.responses!['200']!.content!['application/json']!.schema!.properties!;
    assert.ok(timed.marks && timed.warnings);
  });

  test('bad SSML: 400 naming the element and its position; limits count text, not markup', { timeout: 60_000 }, async () => {
    const cases: Array<[string, RegExp]> = [
      ['<speak>Hello <blink>there</blink></speak>', /unknown element <blink> \(line 1, column 20\)/],
      ['<speak>Hello <break time="forever"/></speak>', /<break> time 'forever'/],
      ['<speak>Hello <s>there</speak>', /not well-formed XML: 1:29: unexpected close tag\. \(<s> is not closed\)/],
    ];
    for (const [text, message] of cases) {
      const r = await post('/v1/audio/tts', { text, voice_id: 'af_heart', format: 'wav' });
      assert.equal(r.statusCode, 400, text);
      assert.match(r.json<{ error: { message: string } }>().error.message, message);
    }
    // Two words in 9,000 characters of markup are within the 5,000-character limit; 5,001 characters of text are not.
    const long = await post('/v1/audio/tts', {
      text: `<speak>${'<s></s>'.repeat(1500)}Hello there.</speak>`,
      voice_id: 'af_heart',
      format: 'wav',
    });
    assert.equal(long.statusCode, 200, long.body.slice(0, 300));
    const tooLong = await post('/v1/audio/tts', { text: `<speak>${'a'.repeat(5001)}</speak>`, voice_id: 'af_heart' });
    assert.equal(tooLong.statusCode, 400, tooLong.body);
    assert.match(tooLong.json().error.message, /5001 characters of text; the limit is 5000/);
  });
});
