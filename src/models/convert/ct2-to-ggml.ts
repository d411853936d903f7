/**
 * CTranslate2 Whisper model (model.bin + vocabulary.json) + Whisper's mel filter bank -> whisper.cpp's ggml file.
 * Tensors are written in the order and types of whisper.cpp's own PyTorch converter, so the result is byte-identical
 * to the published ggml files of the same weights. The output is streamed; only the input is held in memory.
 */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import yauzl from 'yauzl';

interface Ct2Variable {
  shape: number[];
  /** 0 f32, 1 int8, 2 int16, 3 int32, 4 f16, 5 bf16 */
  dtype: number;
  data: Buffer;
}

function readCt2(buffer: Buffer): Map<string, Ct2Variable> {
  let offset = 0;
  const u8 = (): number => buffer.readUInt8(offset++);
  const u16 = (): number => {
    const v = buffer.readUInt16LE(offset);
    offset += 2;
    return v;
  };
  const u32 = (): number => {
    const v = buffer.readUInt32LE(offset);
    offset += 4;
    return v;
  };
  // Strings are a u16 length that counts the trailing NUL.
  const string = (): string => {
    const length = u16();
    const text = buffer.toString('utf8', offset, offset + length - 1);
    offset += length;
    return text;
  };
  const version = u32();
  if (version !== 6) throw new Error(`unsupported CTranslate2 model version ${version}`);
  const spec = string();
  if (spec !== 'WhisperSpec') throw new Error(`not a Whisper model: ${spec}`);
  u32();
  const variables = new Map<string, Ct2Variable>();
  const count = u32();
  for (let i = 0; i < count; i++) {
    const name = string();
    const rank = u8();
    const shape = Array.from({ length: rank }, () => u32());
    const dtype = u8();
    const bytes = u32();
    variables.set(name, { shape, dtype, data: buffer.subarray(offset, offset + bytes) });
    offset += bytes;
  }
  return variables;
}

function scalar(variable: Ct2Variable | undefined, name: string): number {
  if (variable?.shape.length !== 0) throw new Error(`missing scalar ${name}`);
  switch (variable.dtype) {
    case 1:
      return variable.data.readInt8(0);
    case 2:
      return variable.data.readInt16LE(0);
    case 3:
      return variable.data.readInt32LE(0);
    default:
      throw new Error(`scalar ${name} has dtype ${variable.dtype}`);
  }
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** Raw f16 bytes -> f32 bytes. */
function halfBytesToFloatBytes(half: Buffer): Buffer {
  const out = Buffer.alloc(half.length * 2);
  for (let i = 0; i < half.length / 2; i++) out.writeFloatLE(halfToFloat(half.readUInt16LE(i * 2)), i * 4);
  return out;
}

/** GPT-2's byte-level alphabet: printable bytes map to themselves, the rest to code points from 256 up. */
function unicodeToByte(): Map<string, number> {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map = new Map<string, number>();
  let next = 0;
  for (let b = 0; b < 256; b++) {
    if (printable.includes(b)) map.set(String.fromCodePoint(b), b);
    else map.set(String.fromCodePoint(256 + next++), b);
  }
  return map;
}

/** Reads one float32 array from an .npz archive (a zip of .npy files). */
export async function readNpzFloat32(npzPath: string, key: string): Promise<{ shape: number[]; data: Float32Array }> {
  const zip = await yauzl.openPromise(npzPath, { lazyEntries: true });
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName !== `${key}.npy`) continue;
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    zip.close();
    const npy = Buffer.concat(chunks);
    if (npy.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${key}.npy is not a .npy file`);
    const major = npy[6]!;
    const headerLength = major === 1 ? npy.readUInt16LE(8) : npy.readUInt32LE(8);
    const headerStart = major === 1 ? 10 : 12;
    const header = npy.toString('latin1', headerStart, headerStart + headerLength);
    if (!header.includes("'descr': '<f4'") || header.includes("'fortran_order': True"))
      throw new Error(`${key}.npy is not little-endian C-order float32`);
    const shape = (/'shape': \(([^)]*)\)/.exec(header)?.[1] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map(Number);
    const body = npy.subarray(headerStart + headerLength);
    const data = new Float32Array(body.length / 4);
    for (let i = 0; i < data.length; i++) data[i] = body.readFloatLE(i * 4);
    return { shape, data };
  }
  throw new Error(`${key} not found in ${npzPath}`);
}

export interface Ct2ToGgmlInput {
  modelBinPath: string;
  vocabularyPath: string;
  melFiltersNpzPath: string;
  outputPath: string;
}

export async function convertCt2WhisperToGgml(input: Ct2ToGgmlInput): Promise<void> {
  const variables = readCt2(await readFile(input.modelBinPath));
  const vocabulary = JSON.parse(await readFile(input.vocabularyPath, 'utf8')) as string[];
  const get = (name: string): Ct2Variable => {
    const v = variables.get(name);
    if (!v) throw new Error(`model.bin lacks ${name}`);
    if (v.dtype !== 4) throw new Error(`${name}: expected float16, got dtype ${v.dtype}`);
    return v;
  };
  const layers = (prefix: string): number => {
    let n = 0;
    while (variables.has(`${prefix}/layer_${n}/ffn/linear_0/weight`)) n++;
    return n;
  };
  const conv1 = get('encoder/conv1/weight');
  const embeddings = get('decoder/embeddings/weight');
  const nAudioLayer = layers('encoder');
  const nTextLayer = layers('decoder');
  const nVocab = embeddings.shape[0]!;
  const nAudioState = conv1.shape[0]!;
  const nTextState = embeddings.shape[1]!;
  const nMels = conv1.shape[1]!;
  const hyperparameters = [
    nVocab,
    get('encoder/position_encodings/encodings').shape[0]!,
    nAudioState,
    scalar(variables.get('encoder/num_heads'), 'encoder/num_heads'),
    nAudioLayer,
    get('decoder/position_encodings/encodings').shape[0]!,
    nTextState,
    scalar(variables.get('decoder/num_heads'), 'decoder/num_heads'),
    nTextLayer,
    nMels,
    1,
  ];

  const out = createWriteStream(input.outputPath);
  const write = async (chunk: Buffer): Promise<void> => {
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const int32s = (values: number[]): Buffer => {
    const b = Buffer.alloc(values.length * 4);
    for (const [i, v] of values.entries()) b.writeInt32LE(v, i * 4);
    return b;
  };

  await write(int32s([0x67676d6c, ...hyperparameters]));

  const mel = await readNpzFloat32(input.melFiltersNpzPath, `mel_${nMels}`);
  await write(int32s(mel.shape));
  await write(Buffer.from(mel.data.buffer, mel.data.byteOffset, mel.data.byteLength));

  // Regular tokens only (ids below end-of-text); whisper.cpp adds the special tokens itself.
  const endOfText = vocabulary.indexOf('<|endoftext|>');
  if (endOfText < 0) throw new Error('vocabulary lacks <|endoftext|>');
  const byteOf = unicodeToByte();
  await write(int32s([endOfText]));
  for (let id = 0; id < endOfText; id++) {
    const bytes = Buffer.from(
      [...(vocabulary[id] ?? '')].map((ch) => {
        const b = byteOf.get(ch);
        if (b === undefined) throw new Error(`token ${id} has a character outside GPT-2's byte alphabet`);
        return b;
      }),
    );
    await write(Buffer.concat([int32s([bytes.length]), bytes]));
  }

  // f32 for vectors, conv biases (as [n, 1]) and positional embeddings; f16 (as stored) for the rest.
  const tensor = async (name: string, shape: number[], half: Buffer, asFloat32: boolean): Promise<void> => {
    const nameBytes = Buffer.from(name, 'utf8');
    await write(int32s([shape.length, nameBytes.length, asFloat32 ? 0 : 1, ...[...shape].reverse()]));
    await write(nameBytes);
    await write(asFloat32 ? halfBytesToFloatBytes(half) : half);
  };
  const rowBytes = (v: Ct2Variable): number => v.data.length / v.shape[0]!;
  const rows = (v: Ct2Variable, from: number, to: number): Buffer => v.data.subarray(from * rowBytes(v), to * rowBytes(v));
  const vectorPart = (v: Ct2Variable, from: number, to: number): Buffer => v.data.subarray(from * 2, to * 2);
  const matrix = async (name: string, v: Ct2Variable): Promise<void> => tensor(name, v.shape, v.data, false);
  const vector = async (name: string, v: Ct2Variable): Promise<void> => tensor(name, v.shape, v.data, true);
  const layerNorm = async (name: string, prefix: string): Promise<void> => {
    await vector(`${name}.weight`, get(`${prefix}/gamma`));
    await vector(`${name}.bias`, get(`${prefix}/beta`));
  };
  const linear = async (name: string, prefix: string): Promise<void> => {
    await matrix(`${name}.weight`, get(`${prefix}/weight`));
    await vector(`${name}.bias`, get(`${prefix}/bias`));
  };
  /** CT2 fuses q/k/v (self-attention) or k/v (cross-attention); the key has no bias in Whisper (CT2 stores zeros). */
  const fusedSlices = async (names: string[], prefix: string, d: number): Promise<void> => {
    const weight = get(`${prefix}/weight`);
    const bias = get(`${prefix}/bias`);
    for (const [i, name] of names.entries()) {
      await tensor(`${name}.weight`, [d, weight.shape[1]!], rows(weight, i * d, (i + 1) * d), false);
      if (!name.endsWith('.key')) await tensor(`${name}.bias`, [d], vectorPart(bias, i * d, (i + 1) * d), true);
    }
  };
  const selfAttention = async (block: string, prefix: string, d: number): Promise<void> => {
    await fusedSlices([`${block}.attn.query`, `${block}.attn.key`, `${block}.attn.value`], `${prefix}/self_attention/linear_0`, d);
    await linear(`${block}.attn.out`, `${prefix}/self_attention/linear_1`);
    await layerNorm(`${block}.attn_ln`, `${prefix}/self_attention/layer_norm`);
  };
  const feedForward = async (block: string, prefix: string): Promise<void> => {
    await linear(`${block}.mlp.0`, `${prefix}/ffn/linear_0`);
    await linear(`${block}.mlp.2`, `${prefix}/ffn/linear_1`);
    await layerNorm(`${block}.mlp_ln`, `${prefix}/ffn/layer_norm`);
  };

  // PyTorch state_dict order of openai-whisper's model: encoder, then decoder.
  await vector('encoder.positional_embedding', get('encoder/position_encodings/encodings'));
  for (const conv of ['conv1', 'conv2']) {
    await matrix(`encoder.${conv}.weight`, get(`encoder/${conv}/weight`));
    const bias = get(`encoder/${conv}/bias`);
    await tensor(`encoder.${conv}.bias`, [bias.shape[0]!, 1], bias.data, true);
  }
  for (let l = 0; l < nAudioLayer; l++) {
    await selfAttention(`encoder.blocks.${l}`, `encoder/layer_${l}`, nAudioState);
    await feedForward(`encoder.blocks.${l}`, `encoder/layer_${l}`);
  }
  await layerNorm('encoder.ln_post', 'encoder/layer_norm');

  await vector('decoder.positional_embedding', get('decoder/position_encodings/encodings'));
  await matrix('decoder.token_embedding.weight', embeddings);
  for (let l = 0; l < nTextLayer; l++) {
    const block = `decoder.blocks.${l}`;
    const prefix = `decoder/layer_${l}`;
    await selfAttention(block, prefix, nTextState);
    await linear(`${block}.cross_attn.query`, `${prefix}/attention/linear_0`);
    await fusedSlices([`${block}.cross_attn.key`, `${block}.cross_attn.value`], `${prefix}/attention/linear_1`, nTextState);
    await linear(`${block}.cross_attn.out`, `${prefix}/attention/linear_2`);
    await layerNorm(`${block}.cross_attn_ln`, `${prefix}/attention/layer_norm`);
    await feedForward(block, prefix);
  }
  await layerNorm('decoder.ln', 'decoder/layer_norm');

  out.end();
  await once(out, 'finish');
}
