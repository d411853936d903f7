/**
 * Text-to-speech bench, for Kokoro and espeak-ng. Writes bench/results/tts.json.
 * - speed: time to first audio, real-time factor by wall clock and by CPU time (engine level), and time to the first
 *   streamed byte of a one-sentence HTTP request (real server, pcm and mp3);
 * - joins: silence where a streamed text is cut into pieces;
 * - round trip: synthesised fixed sentences transcribed by whisper base (our transcription engine), WER per language
 *   (CER for ja, zh, ko) for the nine Kokoro languages and 20 languages only espeak-ng speaks;
 * - cloned voices: profiles made from speakers of ../shared/eval/vc speak two sentences; the output counts as closer to
 *   its own profile than to another one when its speaker embedding's cosine to its own profile is higher;
 * - per-emotion prosody relative to neutral.
 *
 * Wall-clock numbers depend on what else runs on the machine, so the load average is recorded beside them, and the
 * CPU-time RTF (process CPU seconds per audio second) is reported as the load-independent measure.
 *
 * `--voices [ids]` runs only the per-voice round trip: every Kokoro voice (or the given comma-separated ones) in its own
 * language, English voices with sentences that start with plosives and short words; per-voice WER (CER for ja, zh) and
 * whether the first word was heard, into bench/results/tts-voices.json.
 *
 * `--first-words [ids]` runs every English voice (or the given ones) over the sentences of bench/lib/sentences.ts
 * firstWordEnglish (plosives and short function words first): first words lost or changed and WER, per half (tuning,
 * held out) and per voice, into bench/results/tts-first-words.json. Its `served` way is the engine's speech as the service
 * gets it (0.04 s kept before the first word). `--lead-seconds S` adds a way: that speech with S seconds of silence before
 * it (the model itself starts with about 0.22 s); `--lead-seconds 0.2` is what a response now starts with (service.ts
 * leadInSeconds, 0.24 s before the first sound).
 *
 * `--openers` compares, for every English voice, sentences that start with a short clause spoken in one run and as the
 * speech socket speaks them (the clause alone, then the rest), into bench/results/tts-openers.json.
 *
 * `--speed [rounds]` measures only Kokoro's one-sentence speed and the streamed HTTP first byte (pcm), the given number of
 * rounds (default 1), and prints the medians without writing the results file (quick comparisons while tuning).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resample } from '../src/audio/resample.js';
import { decodeFile } from '../src/audio/decode.js';
import { concatSamples, type Waveform } from '../src/audio/waveform.js';
import { emotions } from '../src/operations/synthesize/emotion.js';
import { EspeakSynthesizer } from '../src/operations/synthesize/engines/espeak.js';
import type { KokoroSynthesizer } from '../src/operations/synthesize/engines/kokoro.js';
import { japanesePronunciation } from '../src/operations/synthesize/engines/kokoro-phonemes.js';
import type { SynthesisRequest, Synthesizer } from '../src/operations/synthesize/synthesizer.js';
import { WhisperCppTranscriber } from '../src/operations/transcribe/engines/whisper-cpp.js';
import { scriptConverter } from '../src/operations/transcribe/script.js';
import { cosineSimilarity, embeddingSampleRate, SpeakerEncoder } from '../src/speakers/embedding.js';
import { buildTestApp, evalDir, makeTempDir, type TestApp } from '../test/helpers/app.js';
import { modelFile } from '../test/helpers/models.js';
import { collect, loadKokoro, measure } from '../test/helpers/tts.js';
import { firstWordHalves, roundTripKokoro, whisperLanguage } from './lib/sentences.js';
import { characterLanguages, errorRate, firstWord } from './lib/wer.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const threads = Number(process.env.VOXD_THREADS ?? 2);

const oneSentence: Array<[string, string]> = [
  ['en-us', 'The library opens at nine in the morning and closes late on Fridays.'],
  ['en-us', 'Please remember to bring your umbrella, because it may rain this afternoon.'],
  ['en-us', 'She finished the report before lunch and sent it to the whole team.'],
  ['es', 'Mañana por la mañana vamos a visitar a mis abuelos en el pueblo.'],
  ['fr', 'Nous avons passé une excellente soirée chez nos amis au bord du lac.'],
  ['it', 'Domani andiamo al mercato per comprare frutta fresca e verdura.'],
  ['pt-br', 'Amanhã vamos visitar os nossos avós que moram no interior.'],
];
const paragraph =
  'Voice technology has changed a great deal over the last decade. Early systems sounded robotic and flat. ' +
  'Modern neural models produce speech that is often hard to tell apart from a human voice. ' +
  'They still need careful text processing, though, because numbers like 1,250 or dates like 2024-03-15 must be read correctly.';
const emotionText = {
  kokoro: { language: 'en-us', voice: 'af_heart', text: 'I never expected to see you here today. What a day it has been!' },
  espeak: { language: 'de', voice: 'espeak-de', text: 'Ich hätte nie gedacht, dich heute hier zu sehen. Was für ein Tag das war!' },
};

interface SpeedSample {
  language: string;
  text: string;
  firstAudioMs: number;
  firstAudioCpuMs: number;
  totalMs: number;
  audioSeconds: number;
  rtf: number;
  cpuRtf: number;
}

async function timed(engine: Synthesizer, request: SynthesisRequest): Promise<Omit<SpeedSample, 'language' | 'text'>> {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  let firstAudioMs = 0;
  let firstAudioCpuMs = 0;
  let samples = 0;
  for await (const chunk of engine.synthesize(request)) {
    if (firstAudioMs === 0) {
      firstAudioMs = performance.now() - start;
      const cpu = process.cpuUsage(cpuStart);
      firstAudioCpuMs = (cpu.user + cpu.system) / 1000;
    }
    samples += chunk.waveform.samples.length;
  }
  const totalMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  const audioSeconds = samples / engine.sampleRate;
  return {
    firstAudioMs,
    firstAudioCpuMs,
    totalMs,
    audioSeconds,
    rtf: totalMs / 1000 / audioSeconds,
    cpuRtf: (cpu.user + cpu.system) / 1e6 / audioSeconds,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Spectral tilt proxy: energy of the first difference relative to the signal's energy, in dB (higher = brighter). */
function brightnessDb(samples: Float32Array): number {
  let signal = 0;
  let difference = 0;
  for (let i = 1; i < samples.length; i++) {
    signal += samples[i]! * samples[i]!;
    difference += (samples[i]! - samples[i - 1]!) ** 2;
  }
  return 10 * Math.log10(difference / signal);
}

async function prosodyDeltas(engine: Synthesizer, setup: { language: string; voice: string; text: string }) {
  const measured = new Map<string, ReturnType<typeof measure> & { brightnessDb: number }>();
  for (const emotion of emotions) {
    const audio = await collect(engine.synthesize({ text: setup.text, language: setup.language, voice: { id: setup.voice }, emotion }));
    measured.set(emotion, { ...measure(audio.samples, audio.sampleRate), brightnessDb: brightnessDb(audio.samples) });
  }
  const neutral = measured.get('neutral')!;
  return Object.fromEntries(
    emotions.map((emotion) => {
      const m = measured.get(emotion)!;
      return [
        emotion,
        {
          f0MedianHz: round(m.medianHz),
          f0LevelSemitones: m.medianHz > 0 ? round(12 * Math.log2(m.medianHz / neutral.medianHz)) : null,
          f0RangeSemitones: round(m.rangeSemitones),
          f0RangeDeltaSemitones: round(m.rangeSemitones - neutral.rangeSemitones),
          rateRelative: round(neutral.durationSeconds / m.durationSeconds),
          energyDeltaDb: round(m.activeRmsDb - neutral.activeRmsDb),
          brightnessDeltaDb: round(m.brightnessDb - neutral.brightnessDb),
          voicedFraction: round(m.voicedFraction),
        },
      ];
    }),
  );
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * Round-trip sentences in the languages only espeak-ng speaks (whisper base knows them all), keyed by the espeak-ng
 * language; no digits (the transcript would write them as numerals). Kokoro's are in ./lib/sentences.ts.
 */
const roundTripEspeak: Record<string, string[]> = {
  de: ['Morgen fahren wir mit dem Zug nach Berlin.', 'Das Wetter ist heute sehr schön.'],
  nl: ['Morgen gaan we met de trein naar Amsterdam.', 'Het weer is vandaag erg mooi.'],
  sv: ['I morgon åker vi tåg till Stockholm.', 'Vädret är mycket fint i dag.'],
  da: ['I morgen tager vi toget til København.', 'Vejret er meget godt i dag.'],
  nb: ['I morgen tar vi toget til Oslo.', 'Været er veldig fint i dag.'],
  pl: ['Jutro jedziemy pociągiem do Warszawy.', 'Dzisiaj pogoda jest bardzo ładna.'],
  ru: ['Завтра мы поедем на поезде в Москву.', 'Сегодня очень хорошая погода.'],
  tr: ['Yarın trenle İstanbul’a gidiyoruz.', 'Bugün hava çok güzel.'],
  cs: ['Zítra pojedeme vlakem do Prahy.', 'Dnes je velmi hezké počasí.'],
  uk: ['Завтра ми поїдемо потягом до Києва.', 'Сьогодні дуже гарна погода.'],
  ro: ['Mâine mergem cu trenul la București.', 'Vremea este foarte frumoasă astăzi.'],
  hu: ['Holnap vonattal megyünk Budapestre.', 'Ma nagyon szép az idő.'],
  fi: ['Huomenna menemme junalla Helsinkiin.', 'Tänään on todella kaunis sää.'],
  el: ['Αύριο θα πάμε με το τρένο στην Αθήνα.', 'Ο καιρός είναι πολύ ωραίος σήμερα.'],
  ca: ['Demà anirem amb tren a Barcelona.', 'Avui fa molt bon temps.'],
  id: ['Besok kami akan naik kereta ke Jakarta.', 'Cuaca hari ini sangat bagus.'],
  vi: ['Ngày mai chúng tôi sẽ đi tàu đến Hà Nội.', 'Hôm nay thời tiết rất đẹp.'],
  ko: ['내일 우리는 기차를 타고 서울에 갑니다.', '오늘 날씨가 정말 좋습니다.'],
  sk: ['Zajtra pôjdeme vlakom do Bratislavy.', 'Dnes je veľmi pekné počasie.'],
  hr: ['Sutra idemo vlakom u Zagreb.', 'Danas je vrijeme vrlo lijepo.'],
};
/** Per-voice round trip, English: first words that are plosives or short function words (where first words were lost). */
const perVoiceEnglish = [
  'Please leave a message after the tone and we will call you back as soon as possible.',
  'Book a table for two at the new place downtown tonight.',
  'To get there, take the bus to the last stop and walk for a few minutes.',
  'Do not forget to bring your keys when you go out.',
  'Go to the desk on the left and ask for a visitor badge.',
];
/** Sentences an assistant starts with a short clause: [opening clause, rest]. */
const openerSentences: Array<[string, string]> = [
  ['Sure,', 'I can help with that.'],
  ['Okay,', 'let me check the schedule for you.'],
  ['Yes,', 'the train to the airport is on time.'],
  ['Well,', 'that depends on the weather tomorrow.'],
  ['Hello,', 'thanks for calling the front desk.'],
  ['Please,', 'take a seat and wait for your name.'],
  ['Great question,', 'the answer is in the second chapter.'],
  ['Of course,', 'you can bring a friend along.'],
];
const clonedVoiceSentences = [
  'Good evening, and welcome to the reading of tonight.',
  'The weather was cold, but the people in the square were happy.',
];

interface RoundTrip {
  language: string;
  engine: string;
  metric: 'wer' | 'cer';
  rate: number;
  /**
   * Japanese only: CER over katakana readings (kuromoji, as the synthesiser reads kanji), so a word Whisper writes in
   * kana where the text has kanji (よい for 良い) is not an error: this scores what was said, not the spelling.
   */
  readingRate?: number;
  samples: Array<{ text: string; transcript: string; rate: number; readingRate?: number }>;
}

/** Katakana reading without spaces and punctuation. */
async function reading(text: string): Promise<string> {
  return (await japanesePronunciation(text)).replace(/[\s\p{P}\p{S}]/gu, '');
}

async function roundTrip(
  engine: Synthesizer,
  language: string,
  texts: string[],
  voice: string,
  transcriber: WhisperCppTranscriber,
): Promise<RoundTrip> {
  const asr = whisperLanguage(language);
  const samples: RoundTrip['samples'] = [];
  let errors = 0;
  let length = 0;
  let readingErrors = 0;
  let readingLength = 0;
  for (const text of texts) {
    const audio = await collect(engine.synthesize({ text, language, voice: { id: voice } }));
    const speech = await resample({ samples: audio.samples, sampleRate: audio.sampleRate, channels: 1 }, 16000);
    const result = await transcriber.transcribe(speech.samples, { language: asr, temperature: 0 });
    // As the transcription service returns it (Chinese in the script its tag asks for).
    const heard = result.segments
      .map((segment) => segment.text)
      .join(' ')
      .trim();
    const transcript = scriptConverter(asr, language)?.(heard) ?? heard;
    const rate = errorRate(text, transcript, asr);
    errors += rate.errors;
    length += rate.referenceLength;
    if (asr !== 'ja') {
      samples.push({ text, transcript, rate: round(rate.rate) });
      continue;
    }
    const readingRate = errorRate(await reading(text), await reading(transcript), 'ja');
    readingErrors += readingRate.errors;
    readingLength += readingRate.referenceLength;
    samples.push({ text, transcript, rate: round(rate.rate), readingRate: round(readingRate.rate) });
  }
  const metric = ['ja', 'zh', 'ko'].includes(asr) ? 'cer' : 'wer';
  const readingRate = readingLength > 0 ? { readingRate: round(readingErrors / readingLength) } : {};
  process.stdout.write(
    `round trip ${engine.engine} ${language}: ${metric} ${(errors / length).toFixed(3)}${readingLength > 0 ? `, reading cer ${(readingErrors / readingLength).toFixed(3)}` : ''}\n`,
  );
  return { language, engine: engine.engine, metric, rate: round(errors / length), ...readingRate, samples };
}

/** English speech as whisper base hears it (language given, temperature 0). */
async function hear(transcriber: WhisperCppTranscriber, samples: Float32Array, sampleRate: number): Promise<string> {
  const speech = await resample({ samples, sampleRate, channels: 1 }, 16000);
  return (await transcriber.transcribe(speech.samples, { language: 'en', temperature: 0 })).segments
    .map((segment) => segment.text)
    .join(' ')
    .trim();
}

/** Silence (10 ms frames below -50 dBFS) at the start or end of a piece, in seconds. */
function edgeSilenceSeconds(samples: Float32Array, sampleRate: number, fromEnd: boolean): number {
  const frame = sampleRate / 100;
  let frames = 0;
  for (;;) {
    const start = fromEnd ? samples.length - (frames + 1) * frame : frames * frame;
    if (start < 0 || start + frame > samples.length) return frames / 100;
    let energy = 0;
    for (let i = start; i < start + frame; i++) energy += samples[i]! * samples[i]!;
    if (10 * Math.log10(energy / frame + 1e-12) > -50) return frames / 100;
    frames++;
  }
}

/** Pieces of a streamed text and the silence at each join (end of one piece + start of the next). */
async function joins(engine: Synthesizer, request: SynthesisRequest) {
  const pieces: Array<{ text: string; seconds: number; leadingSilenceSeconds: number; trailingSilenceSeconds: number }> = [];
  for await (const chunk of engine.synthesize(request)) {
    const { samples, sampleRate } = chunk.waveform;
    pieces.push({
      text: chunk.text,
      seconds: round(samples.length / sampleRate),
      leadingSilenceSeconds: edgeSilenceSeconds(samples, sampleRate, false),
      trailingSilenceSeconds: edgeSilenceSeconds(samples, sampleRate, true),
    });
  }
  return {
    pieces,
    joinSilenceSeconds: pieces.slice(1).map((piece, i) => round(pieces[i]!.trailingSilenceSeconds + piece.leadingSilenceSeconds)),
  };
}

/** Time to the first streamed byte and to the end, for one-sentence requests through the real HTTP server. */
async function httpStreaming(app: TestApp, format: 'pcm' | 'mp3') {
  await app.app.listen({ port: 0, host: '127.0.0.1' }).catch(() => undefined);
  const { port } = app.app.server.address() as AddressInfo;
  const samples: Array<{ text: string; firstByteMs: number; totalMs: number }> = [];
  for (const [language, text] of [['en-us', 'Warm up.'] as const, ...oneSentence]) {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/audio/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        text,
        language,
        voice_id:
          language === 'en-us'
            ? 'af_heart'
            : `${language === 'pt-br' ? 'p' : language[0]}f_${{ es: 'dora', fr: 'siwis', it: 'sara', 'pt-br': 'dora' }[language as 'es']}`,
        stream: true,
        format,
      }),
    });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    const reader = response.body!.getReader();
    let firstByteMs = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read())
      if (firstByteMs === 0 && r.value.length > 0) firstByteMs = performance.now() - started;
    if (text !== 'Warm up.') samples.push({ text, firstByteMs: round(firstByteMs), totalMs: round(performance.now() - started) });
  }
  return { medianFirstByteMs: round(median(samples.map((s) => s.firstByteMs))), samples };
}

/** A multipart body with several files under one field name. */
function voiceUpload(name: string, files: string[]): { body: Buffer; contentType: string } {
  const boundary = '----voxdbench';
  const parts = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}\r\n--${boundary}\r\nContent-Disposition: form-data; name="consent"\r\n\r\ntrue\r\n--${boundary}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen-us\r\n`,
    ),
  ];
  for (const file of files)
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${path.basename(file)}"\r\n\r\n`),
      readFileSync(file),
      Buffer.from('\r\n'),
    );
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Speakers of ../shared/eval/vc: file name up to the utterance number (librispeech 1998-15444-0001, pv speaker_1_utt_1, rtvc p240_00000). */
function evalSpeakers(): Map<string, string[]> {
  const speakers = new Map<string, string[]>();
  const root = path.join(evalDir, 'vc');
  for (const set of readdirSync(root).sort()) {
    for (const file of readdirSync(path.join(root, set))
      .filter((f) => f.endsWith('.wav'))
      .sort()) {
      const speaker = `${set}/${file.replace(/(_utt_\d+|_test_utt|-\d+-\d+|_\d+)\.wav$/, '')}`;
      speakers.set(speaker, [...(speakers.get(speaker) ?? []), path.join(root, set, file)]);
    }
  }
  return speakers;
}

async function clonedVoices(app: TestApp, encoder: SpeakerEncoder) {
  const profiles: Array<{ speaker: string; voiceId: string; embedding: Float32Array; output?: Float32Array; blend?: unknown }> = [];
  const owner = (await app.container.apiKeys.verify(app.key))!;
  for (const [speaker, files] of evalSpeakers()) {
    const { body, contentType } = voiceUpload(speaker, files);
    const created = await app.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { authorization: `Bearer ${app.key}`, 'content-type': contentType },
      payload: body,
    });
    if (created.statusCode !== 201) {
      process.stdout.write(`cloned voice ${speaker}: not created (${created.statusCode} ${created.json().error?.message})\n`);
      continue;
    }
    const voiceId = created.json().voice_id as string;
    profiles.push({ speaker, voiceId, embedding: (await app.container.voices.speakerEmbedding(voiceId, owner))! });
  }
  const scratch = makeTempDir('tts-bench');
  for (const profile of profiles) {
    const outputs: Waveform[] = [];
    for (const text of clonedVoiceSentences) {
      const r = await app.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: { authorization: `Bearer ${app.key}` },
        payload: { text, voice_id: profile.voiceId, language: 'en-us', format: 'wav' },
      });
      if (r.statusCode !== 200) throw new Error(`tts for ${profile.speaker}: ${r.statusCode} ${r.body}`);
      const file = path.join(scratch, `${profile.voiceId}.wav`);
      writeFileSync(file, r.rawPayload);
      outputs.push(await decodeFile(file, { sampleRate: embeddingSampleRate, channels: 1 }));
    }
    const joined = concatSamples(outputs.map((w) => w.samples));
    profile.output = await encoder.embedUtterance({ samples: joined, sampleRate: embeddingSampleRate, channels: 1 });
    profile.blend =
      ((await app.container.voices.record(profile.voiceId, owner)).analysis['kokoro-blend-en-us'] as { analysis?: unknown } | undefined)
        ?.analysis ?? null;
  }
  let closer = 0;
  let pairs = 0;
  const speakers = profiles.map((profile) => {
    const own = cosineSimilarity(profile.output!, profile.embedding);
    const others = profiles
      .filter((o) => o !== profile)
      .map((o) => ({ speaker: o.speaker, similarity: cosineSimilarity(profile.output!, o.embedding) }));
    const beaten = others.filter((o) => o.similarity >= own);
    closer += others.length - beaten.length;
    pairs += others.length;
    process.stdout.write(
      `cloned voice ${profile.speaker}: own ${own.toFixed(3)}, closest other ${Math.max(...others.map((o) => o.similarity)).toFixed(3)}\n`,
    );
    return {
      speaker: profile.speaker,
      blend: profile.blend,
      ownSimilarity: round(own),
      closestOther: others.sort((a, b) => b.similarity - a.similarity)[0],
      closerThanAll: beaten.length === 0,
    };
  });
  return {
    profiles: profiles.length,
    pairs,
    closerToOwnFraction: round(closer / pairs),
    closerThanAllFraction: round(speakers.filter((s) => s.closerThanAll).length / speakers.length),
    speakers,
  };
}

async function kokoroSpeed(kokoro: KokoroSynthesizer): Promise<SpeedSample[]> {
  const samples: SpeedSample[] = [];
  for (const [language, text] of oneSentence) {
    samples.push({ language, text, ...(await timed(kokoro, { text, language, voice: { id: kokoro.defaultVoice(language)! } })) });
    process.stdout.write(
      `kokoro ${language}: first ${samples.at(-1)!.firstAudioMs.toFixed(0)} ms (cpu ${samples.at(-1)!.firstAudioCpuMs.toFixed(0)} ms), rtf ${samples.at(-1)!.rtf.toFixed(3)} (cpu ${samples.at(-1)!.cpuRtf.toFixed(3)})\n`,
    );
  }
  return samples;
}

function speedSummary(samples: SpeedSample[]) {
  return {
    medianFirstAudioMs: round(median(samples.map((s) => s.firstAudioMs))),
    medianFirstAudioCpuMs: round(median(samples.map((s) => s.firstAudioCpuMs))),
    medianRtf: round(median(samples.map((s) => s.rtf))),
    medianCpuRtf: round(median(samples.map((s) => s.cpuRtf))),
  };
}

const loadAverageAtStart = loadavg();
const kokoro = await loadKokoro(threads);
// Warm-up: the first run of a session allocates its buffers.
await collect(kokoro.synthesize({ text: 'Warm up.', language: 'en-us', voice: { id: 'af_heart' } }));

const voicesArgument = process.argv.indexOf('--voices');
if (voicesArgument >= 0) {
  const wanted = process.argv[voicesArgument + 1]?.split(',');
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads,
  });
  const resultsFile = path.join(benchDir, 'results', 'tts-voices.json');
  type VoiceTrip = RoundTrip & { voice: string; firstWordLost: number };
  // A run of some voices replaces their rows and keeps the others'.
  const voices: VoiceTrip[] = existsSync(resultsFile)
    ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as { voices: VoiceTrip[] }).voices
    : [];
  // Written after every voice: a long run that is stopped keeps what it measured.
  const write = (): void => {
    const english = voices.filter((v) => v.language.startsWith('en'));
    writeFileSync(
      resultsFile,
      `${JSON.stringify(
        {
          generatedAt: new Date().toISOString(),
          machine: { threads, loadAverageAtStart, loadAverageAtEnd: loadavg() },
          notes: [
            'Each Kokoro voice in its own language through the engine (as POST /v1/audio/tts streams it); whisper base (greedy, language given) transcribes; WER (CER for ja, zh) per voice. firstWordLost: sentences whose transcript starts with another word (space-delimited languages).',
          ],
          summary: {
            voices: voices.length,
            maxEnglishWer: Math.max(...english.map((v) => v.rate)),
            voicesLosingFirstWord: voices.filter((v) => v.firstWordLost > 0).map((v) => v.voice),
          },
          voices,
        },
        null,
        2,
      )}\n`,
    );
  };
  for (const voice of wanted ? wanted.map((id) => kokoro.voices().find((v) => v.id === id)!) : kokoro.voices()) {
    const language = voice.languages[0]!;
    const trip = await roundTrip(
      kokoro,
      language,
      language.startsWith('en') ? perVoiceEnglish : roundTripKokoro[language]!,
      voice.id,
      transcriber,
    );
    // A space-delimited transcript whose first word is not the text's: the first word was lost (or misheard).
    const firstWordLost = characterLanguages.has(whisperLanguage(language))
      ? 0
      : trip.samples.filter((s) => firstWord(s.text) !== firstWord(s.transcript)).length;
    const row = { voice: voice.id, firstWordLost, ...trip };
    const index = voices.findIndex((v) => v.voice === voice.id);
    if (index >= 0) voices[index] = row;
    else voices.push(row);
    process.stdout.write(`${voice.id}: ${trip.metric} ${trip.rate}, first word lost in ${firstWordLost}/${trip.samples.length}\n`);
    write();
  }
  await kokoro.close();
  process.exit(0);
}

const firstWordsArgument = process.argv.indexOf('--first-words');
if (firstWordsArgument >= 0) {
  // Every English voice (or the given ones) says firstWordEnglish; whisper base hears it. Per half and per voice: first
  // words lost or changed, and WER.
  const ids = process.argv[firstWordsArgument + 1];
  const wanted = ids?.startsWith('--') ? undefined : ids?.split(',');
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads,
  });
  const served = async (text: string, language: string, voice: string): Promise<Float32Array> =>
    (await collect(kokoro.synthesize({ text, language, voice: { id: voice } }))).samples;
  const ways: Record<string, (text: string, language: string, voice: string) => Promise<Float32Array>> = { served };
  const leadArgument = process.argv.indexOf('--lead-seconds');
  if (leadArgument >= 0) {
    const leadSeconds = Number(process.argv[leadArgument + 1]);
    ways[`served after ${leadSeconds} s of silence`] = async (text, language, voice) => {
      const speech = await served(text, language, voice);
      const padded = new Float32Array(Math.round(leadSeconds * kokoro.sampleRate) + speech.length);
      padded.set(speech, padded.length - speech.length);
      return padded;
    };
  }
  type Tally = { sentences: number; firstWordErrors: number; errors: number; words: number };
  const tally = (): Tally => ({ sentences: 0, firstWordErrors: 0, errors: 0, words: 0 });
  const report = (t: Tally) => ({
    sentences: t.sentences,
    firstWordErrors: t.firstWordErrors,
    wer: round(t.errors / t.words),
    errors: t.errors,
    words: t.words,
  });
  const totals: Record<string, Record<string, Tally>> = {};
  const perVoice: Record<string, Record<string, Record<string, Tally>>> = {};
  const misheard: Array<{ way: string; half: string; voice: string; text: string; transcript: string; firstWordChanged: boolean }> = [];
  const voices = kokoro.voices().filter((v) => v.languages[0]!.startsWith('en') && (!wanted || wanted.includes(v.id)));
  for (const voice of voices) {
    const language = voice.languages[0]!;
    for (const [way, speak] of Object.entries(ways)) {
      for (const [half, texts] of Object.entries(firstWordHalves)) {
        const voiceTally = (((perVoice[way] ??= {})[half] ??= {})[voice.id] ??= tally());
        const total = ((totals[way] ??= {})[half] ??= tally());
        for (const text of texts) {
          const transcript = await hear(transcriber, await speak(text, language, voice.id), kokoro.sampleRate);
          const rate = errorRate(text, transcript, 'en');
          const firstWordChanged = firstWord(transcript) !== firstWord(text);
          for (const t of [voiceTally, total]) {
            t.sentences++;
            t.firstWordErrors += firstWordChanged ? 1 : 0;
            t.errors += rate.errors;
            t.words += rate.referenceLength;
          }
          if (rate.errors > 0) misheard.push({ way, half, voice: voice.id, text, transcript, firstWordChanged });
        }
      }
    }
    process.stdout.write(
      `${voice.id}: ${Object.entries(perVoice)
        .map(
          ([way, halves]) =>
            `${way} ${Object.entries(halves)
              .map(([half, v]) => `${half} ${v[voice.id]!.firstWordErrors} first words, ${v[voice.id]!.errors} errors`)
              .join('; ')}`,
        )
        .join(' | ')}\n`,
    );
  }
  const summary = Object.fromEntries(
    Object.entries(totals).map(([way, halves]) => [way, Object.fromEntries(Object.entries(halves).map(([half, t]) => [half, report(t)]))]),
  );
  writeFileSync(
    path.join(benchDir, 'results', 'tts-first-words.json'),
    `${JSON.stringify(
      {
        generatedAt: new Date().toISOString(),
        machine: { threads, loadAverageAtStart, loadAverageAtEnd: loadavg() },
        notes: [
          'Every English Kokoro voice says the sentences of bench/lib/sentences.ts firstWordEnglish (first words that are plosives or short function words), each way of synthesising them; whisper base (language given, temperature 0) transcribes. Sentences are split into a tuning half, where any parameter was chosen, and a held-out half.',
          "firstWordErrors: transcripts whose first word (case and punctuation aside, OK = okay) is not the text's; wer over all words of the half. perVoice lists the voices with a first-word error or any word error.",
        ],
        summary,
        perVoice: Object.fromEntries(
          Object.entries(perVoice).map(([way, halves]) => [
            way,
            Object.fromEntries(
              Object.entries(halves).map(([half, v]) => [
                half,
                Object.fromEntries(
                  Object.entries(v)
                    .filter(([, t]) => t.errors > 0 || t.firstWordErrors > 0)
                    .map(([id, t]) => [id, report(t)]),
                ),
              ]),
            ),
          ]),
        ),
        misheard,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  await kokoro.close();
  process.exit(0);
}

if (process.argv.includes('--openers')) {
  // The speech socket's first piece: a short opening clause spoken as a run of its own, then the rest of the sentence as
  // the next run, joined as the socket sends them; against the whole sentence in one run. Every English voice.
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads,
  });
  const ways = { whole: { errors: 0, words: 0, firstWordLost: 0 }, opener: { errors: 0, words: 0, firstWordLost: 0 } };
  const openerMs: number[] = [];
  const wholeMs: number[] = [];
  const samples: Array<{ voice: string; text: string; whole: string; opener: string }> = [];
  for (const voice of kokoro.voices().filter((v) => v.languages[0]!.startsWith('en'))) {
    const language = voice.languages[0]!;
    for (const [opener, rest] of openerSentences) {
      const text = `${opener} ${rest}`;
      let started = performance.now();
      const whole = await collect(kokoro.synthesize({ text, language, voice: { id: voice.id } }));
      wholeMs.push(performance.now() - started);
      started = performance.now();
      const first = await collect(kokoro.synthesize({ text: opener, language, voice: { id: voice.id } }));
      openerMs.push(performance.now() - started);
      const second = await collect(kokoro.synthesize({ text: rest, language, voice: { id: voice.id } }));
      const joined = new Float32Array(first.samples.length + second.samples.length);
      joined.set(first.samples);
      joined.set(second.samples, first.samples.length);
      const heard = {
        whole: await hear(transcriber, whole.samples, kokoro.sampleRate),
        opener: await hear(transcriber, joined, kokoro.sampleRate),
      };
      for (const way of ['whole', 'opener'] as const) {
        const rate = errorRate(text, heard[way], 'en');
        ways[way].errors += rate.errors;
        ways[way].words += rate.referenceLength;
        if (firstWord(heard[way]) !== firstWord(text)) ways[way].firstWordLost++;
      }
      samples.push({ voice: voice.id, text, ...heard });
    }
    process.stdout.write(`${voice.id}: whole ${ways.whole.errors} errors, opener ${ways.opener.errors} errors so far\n`);
  }
  const summary = Object.fromEntries(
    Object.entries(ways).map(([way, w]) => [
      way,
      { wer: round(w.errors / w.words), errors: w.errors, firstWordLost: w.firstWordLost, sentences: samples.length },
    ]),
  );
  writeFileSync(
    path.join(benchDir, 'results', 'tts-openers.json'),
    `${JSON.stringify(
      {
        generatedAt: new Date().toISOString(),
        machine: { threads, loadAverageAtStart, loadAverageAtEnd: loadavg() },
        notes: [
          'Every English Kokoro voice says each sentence twice: whole, in one run; and as the speech socket speaks a short opening clause, the clause in a run of its own followed by the rest in a second run, joined. whisper base (greedy, English) transcribes both; firstWordLost: transcripts that start with another word. synthesisMs: median time to make the whole sentence and the opening clause alone.',
        ],
        summary: { ...summary, synthesisMs: { whole: round(median(wholeMs)), opener: round(median(openerMs)) } },
        samples,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}; synthesis ms whole ${round(median(wholeMs))}, opener ${round(median(openerMs))}\n`);
  await kokoro.close();
  process.exit(0);
}

const speedArgument = process.argv.indexOf('--speed');
if (speedArgument >= 0) {
  const rounds = Number(process.argv[speedArgument + 1] ?? 1);
  const samples: SpeedSample[] = [];
  const firstBytes: number[] = [];
  const app = await buildTestApp();
  for (let r = 0; r < rounds; r++) {
    samples.push(...(await kokoroSpeed(kokoro)));
    firstBytes.push(...(await httpStreaming(app, 'pcm')).samples.map((s) => s.firstByteMs));
  }
  await app.close();
  await kokoro.close();
  process.stdout.write(
    `${JSON.stringify({ kokoro: speedSummary(samples), httpPcmMedianFirstByteMs: round(median(firstBytes)), load: { start: loadAverageAtStart, end: loadavg() } })}\n`,
  );
  process.exit(0);
}

const espeak = await EspeakSynthesizer.load();
const kokoroSentences = await kokoroSpeed(kokoro);
const kokoroParagraph = await timed(kokoro, { text: paragraph, language: 'en-us', voice: { id: 'af_heart' } });
const kokoroJoins = {
  oneSentence: await joins(kokoro, { text: oneSentence[0]![1], language: 'en-us', voice: { id: 'af_heart' } }),
  paragraph: await joins(kokoro, { text: paragraph, language: 'en-us', voice: { id: 'af_heart' } }),
};
const espeakSentences: SpeedSample[] = [];
for (const [language, text] of oneSentence) {
  espeakSentences.push({
    language,
    text,
    ...(await timed(espeak, { text, language: language === 'pt-br' ? 'pt-br' : language, voice: { id: `espeak-${language}` } })),
  });
}
const kokoroEmotions = await prosodyDeltas(kokoro, emotionText.kokoro);
const espeakEmotions = await prosodyDeltas(espeak, emotionText.espeak);

const app = await buildTestApp();
const http = { pcm: await httpStreaming(app, 'pcm'), mp3: await httpStreaming(app, 'mp3') };
process.stdout.write(`http first byte: pcm ${http.pcm.medianFirstByteMs} ms, mp3 ${http.mp3.medianFirstByteMs} ms\n`);

const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
  modelId: 'whisper-base',
  threads,
});
const kokoroRoundTrip: RoundTrip[] = [];
for (const [language, texts] of Object.entries(roundTripKokoro))
  kokoroRoundTrip.push(await roundTrip(kokoro, language, texts, kokoro.defaultVoice(language)!, transcriber));
const espeakRoundTrip: RoundTrip[] = [];
for (const [language, texts] of Object.entries(roundTripEspeak))
  espeakRoundTrip.push(await roundTrip(espeak, language, texts, `espeak-${espeak.resolve(language)}`, transcriber));

const encoder = await SpeakerEncoder.load(await modelFile('resemblyzer-ge2e', 'ge2e.onnx'), { threads });
const cloned = await clonedVoices(app, encoder);
await app.close();

const meanRate = (trips: RoundTrip[]) => round(trips.reduce((sum, t) => sum + t.rate, 0) / trips.length);
const results = {
  generatedAt: new Date().toISOString(),
  machine: { threads, loadAverageAtStart, loadAverageAtEnd: loadavg() },
  notes: [
    'rtf = wall seconds / audio seconds; cpuRtf = process CPU seconds / audio seconds (independent of other load on the machine).',
    'firstAudioMs = time from the request to the first synthesised piece of a one-sentence request (engine level); firstAudioCpuMs = process CPU time until then.',
    'http.*.firstByteMs = time from sending a streamed one-sentence request to the real server until the first audio byte arrives.',
    'joins: silence (10 ms frames below -50 dBFS) where streamed pieces meet; sentence ends keep their natural pause.',
    'roundTrip: whisper base (greedy, language given) transcribes the synthesised sentences; WER, or CER for ja/zh/ko, over all sentences of a language.',
    'clonedVoices: each profile (all clips of one speaker of ../shared/eval/vc) speaks two sentences through POST /v1/audio/tts; closerToOwnFraction = share of (profile, other profile) pairs where the output is closer (GE2E cosine) to its own profile.',
  ],
  kokoro: {
    oneSentence: {
      ...speedSummary(kokoroSentences),
      samples: kokoroSentences.map((s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v]))),
    },
    paragraph: Object.fromEntries(Object.entries(kokoroParagraph).map(([k, v]) => [k, round(v)])),
    http,
    joins: kokoroJoins,
    roundTrip: {
      meanEnglishWer: meanRate(kokoroRoundTrip.filter((t) => t.language.startsWith('en'))),
      meanOtherRate: meanRate(kokoroRoundTrip.filter((t) => !t.language.startsWith('en'))),
      languages: kokoroRoundTrip,
    },
    emotions: kokoroEmotions,
  },
  espeak: {
    oneSentence: {
      medianFirstAudioMs: round(median(espeakSentences.map((s) => s.firstAudioMs))),
      medianRtf: round(median(espeakSentences.map((s) => s.rtf))),
      medianCpuRtf: round(median(espeakSentences.map((s) => s.cpuRtf))),
    },
    languages: espeak.languages().length,
    roundTrip: { meanRate: meanRate(espeakRoundTrip), languages: espeakRoundTrip },
    emotions: espeakEmotions,
  },
  clonedVoices: cloned,
};
await kokoro.close();
mkdirSync(path.join(benchDir, 'results'), { recursive: true });
writeFileSync(path.join(benchDir, 'results', 'tts.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(
  `${JSON.stringify({ kokoro: { oneSentence: { ...results.kokoro.oneSentence, samples: undefined }, paragraph: results.kokoro.paragraph, http: { pcm: http.pcm.medianFirstByteMs, mp3: http.mp3.medianFirstByteMs }, roundTrip: { en: results.kokoro.roundTrip.meanEnglishWer, other: results.kokoro.roundTrip.meanOtherRate } }, espeak: { ...results.espeak.oneSentence, roundTrip: results.espeak.roundTrip.meanRate }, cloned: { pairs: cloned.closerToOwnFraction, all: cloned.closerThanAllFraction }, load: results.machine }, null, 1)}\n`,
);
