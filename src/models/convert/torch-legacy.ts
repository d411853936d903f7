/**
 * Readers for PyTorch's `torch.save` formats, enough for float state dicts: the legacy one (before torch 1.6) and the zip
 * one (torch 1.6 on: the same object pickle as `<folder>/data.pkl`, each storage as its own entry `<folder>/data/<key>`).
 * The unpickler also reads a pickled dict of float32 numpy arrays (what some checkpoints hold instead of tensors).
 *
 * Legacy format:
 * The file is a sequence of pickles (protocol 2): magic number, protocol version, system info, the saved object, then the
 * list of storage keys; after that, for each key in that order, the raw storage: int64 element count, then the elements
 * little-endian. Tensors inside the object are `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` where
 * the storage is a persistent id `('storage', torch.FloatStorage, key, location, size, view_metadata)`.
 */
import { readFile } from 'node:fs/promises';
import yauzl from 'yauzl';
import { VoxError } from '../../core/errors.js';

const legacyMagicNumber = 0x1950a86a20f9469cfc6cn;
const legacyProtocolVersion = 1001;

export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

/** A storage as referenced from the object pickle; its bytes come later in the file. */
interface StorageRef {
  readonly kind: 'storage';
  key: string;
  dtype: string;
  elementCount: number;
}

interface TensorRef {
  readonly kind: 'tensor';
  storage: StorageRef;
  offset: number;
  shape: number[];
  stride: number[];
}

interface GlobalRef {
  readonly kind: 'global';
  module: string;
  name: string;
}

/** A numpy array being rebuilt: `_reconstruct` makes it empty, BUILD gives it its shape, dtype and bytes. */
interface NumpyArray {
  readonly kind: 'ndarray';
  shape: number[];
  dtype?: NumpyDtype;
  data?: Uint8Array;
}

interface NumpyDtype {
  readonly kind: 'dtype';
  /** e.g. 'f4' */
  name: string;
  /** '<', '>' or '|' once BUILD has run. */
  byteOrder: string;
}

/** A Python call we do not model; kept so the object tree can still be walked. */
interface OpaqueObject {
  readonly kind: 'opaque';
  callable: GlobalRef;
}

type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PickleValue[]
  | Map<PickleValue, PickleValue>
  | StorageRef
  | TensorRef
  | GlobalRef
  | OpaqueObject
  | NumpyArray
  | NumpyDtype
  | PickleTuple;

/** Tuples are kept distinct from lists only so persistent ids and call arguments read naturally. */
class PickleTuple {
  constructor(readonly items: PickleValue[]) {}
}

const markSentinel = Symbol('mark');
type StackItem = PickleValue | typeof markSentinel;

/** Element sizes and the float conversion for the storage types a state dict may hold. */
const storageTypes: Record<string, { bytes: number; read: (view: DataView, byteOffset: number) => number }> = {
  FloatStorage: { bytes: 4, read: (v, o) => v.getFloat32(o, true) },
  DoubleStorage: { bytes: 8, read: (v, o) => v.getFloat64(o, true) },
  HalfStorage: { bytes: 2, read: (v, o) => halfToFloat(v.getUint16(o, true)) },
};

function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function formatError(message: string): VoxError {
  return new VoxError('internal', `Legacy PyTorch file: ${message}`);
}

class Unpickler {
  private position: number;
  private readonly stack: StackItem[] = [];
  private readonly memo = new Map<number, PickleValue>();

  constructor(
    private readonly bytes: Buffer,
    start: number,
    private readonly storages: Map<string, StorageRef>,
  ) {
    this.position = start;
  }

  get end(): number {
    return this.position;
  }

  load(): PickleValue {
    const b = this.bytes;
    for (;;) {
      if (this.position >= b.length) throw formatError('truncated pickle');
      const op = b[this.position++]!;
      switch (op) {
        case 0x80: // PROTO
          this.position++;
          break;
        case 0x2e: // STOP
          return this.pop();
        case 0x28: // MARK
          this.stack.push(markSentinel);
          break;
        case 0x7d: // EMPTY_DICT
          this.stack.push(new Map());
          break;
        case 0x5d: // EMPTY_LIST
          this.stack.push([]);
          break;
        case 0x29: // EMPTY_TUPLE
          this.stack.push(new PickleTuple([]));
          break;
        case 0x4e: // NONE
          this.stack.push(null);
          break;
        case 0x88: // NEWTRUE
          this.stack.push(true);
          break;
        case 0x89: // NEWFALSE
          this.stack.push(false);
          break;
        case 0x4b: // BININT1
          this.stack.push(b[this.position]!);
          this.position += 1;
          break;
        case 0x4d: // BININT2
          this.stack.push(b.readUInt16LE(this.position));
          this.position += 2;
          break;
        case 0x4a: // BININT
          this.stack.push(b.readInt32LE(this.position));
          this.position += 4;
          break;
        case 0x8a: {
          // LONG1: little-endian two's complement of n bytes
          const n = b[this.position++]!;
          this.stack.push(this.readLong(n));
          break;
        }
        case 0x47: // BINFLOAT (big-endian)
          this.stack.push(b.readDoubleBE(this.position));
          this.position += 8;
          break;
        case 0x58: {
          // BINUNICODE
          const n = b.readUInt32LE(this.position);
          this.position += 4;
          this.stack.push(b.toString('utf8', this.position, this.position + n));
          this.position += n;
          break;
        }
        case 0x55: {
          // SHORT_BINSTRING
          const n = b[this.position++]!;
          this.stack.push(b.toString('latin1', this.position, this.position + n));
          this.position += n;
          break;
        }
        case 0x54: {
          // BINSTRING
          const n = b.readUInt32LE(this.position);
          this.position += 4;
          this.stack.push(b.toString('latin1', this.position, this.position + n));
          this.position += n;
          break;
        }
        case 0x43: {
          // SHORT_BINBYTES
          const n = b[this.position++]!;
          this.stack.push(Uint8Array.prototype.slice.call(b, this.position, this.position + n));
          this.position += n;
          break;
        }
        case 0x42: {
          // BINBYTES
          const n = b.readUInt32LE(this.position);
          this.position += 4;
          this.stack.push(Uint8Array.prototype.slice.call(b, this.position, this.position + n));
          this.position += n;
          break;
        }
        case 0x71: // BINPUT
          this.memo.set(b[this.position++]!, this.top());
          break;
        case 0x72: // LONG_BINPUT
          this.memo.set(b.readUInt32LE(this.position), this.top());
          this.position += 4;
          break;
        case 0x68: // BINGET
          this.stack.push(this.memoGet(b[this.position++]!));
          break;
        case 0x6a: // LONG_BINGET
          this.stack.push(this.memoGet(b.readUInt32LE(this.position)));
          this.position += 4;
          break;
        case 0x30: // POP
          this.pop();
          break;
        case 0x31: // POP_MARK
          this.popMark();
          break;
        case 0x32: // DUP
          this.stack.push(this.top());
          break;
        case 0x74: // TUPLE
          this.stack.push(new PickleTuple(this.popMark()));
          break;
        case 0x85: // TUPLE1
          this.stack.push(new PickleTuple(this.popN(1)));
          break;
        case 0x86: // TUPLE2
          this.stack.push(new PickleTuple(this.popN(2)));
          break;
        case 0x87: // TUPLE3
          this.stack.push(new PickleTuple(this.popN(3)));
          break;
        case 0x6c: // LIST
          this.stack.push(this.popMark());
          break;
        case 0x64: {
          // DICT
          const items = this.popMark();
          const dict = new Map<PickleValue, PickleValue>();
          for (let i = 0; i + 1 < items.length; i += 2) dict.set(items[i]!, items[i + 1]!);
          this.stack.push(dict);
          break;
        }
        case 0x61: {
          // APPEND
          const value = this.pop();
          this.asList(this.top()).push(value);
          break;
        }
        case 0x65: {
          // APPENDS
          const values = this.popMark();
          this.asList(this.top()).push(...values);
          break;
        }
        case 0x73: {
          // SETITEM
          const value = this.pop();
          const key = this.pop();
          this.asDict(this.top()).set(key, value);
          break;
        }
        case 0x75: {
          // SETITEMS
          const items = this.popMark();
          const dict = this.asDict(this.top());
          for (let i = 0; i + 1 < items.length; i += 2) dict.set(items[i]!, items[i + 1]!);
          break;
        }
        case 0x63: {
          // GLOBAL: "module\nname\n"
          const module = this.readLine();
          const name = this.readLine();
          this.stack.push({ kind: 'global', module, name });
          break;
        }
        case 0x52: {
          // REDUCE
          const args = this.pop();
          const callable = this.pop();
          this.stack.push(this.call(callable, args));
          break;
        }
        case 0x81: {
          // NEWOBJ
          const args = this.pop();
          const cls = this.pop();
          this.stack.push(this.call(cls, args));
          break;
        }
        case 0x62: {
          // BUILD: numpy arrays and dtypes take their state; other objects' state (e.g. OrderedDict's _metadata) is not needed
          const state = this.pop();
          this.build(this.top(), state);
          break;
        }
        case 0x51: // BINPERSID
          this.stack.push(this.persistentLoad(this.pop()));
          break;
        default:
          throw formatError(`unsupported pickle opcode 0x${op.toString(16)} at byte ${this.position - 1}`);
      }
    }
  }

  private readLong(n: number): number | bigint {
    if (n === 0) return 0;
    let value = 0n;
    for (let i = n - 1; i >= 0; i--) value = (value << 8n) | BigInt(this.bytes[this.position + i]!);
    if (this.bytes[this.position + n - 1]! & 0x80) value -= 1n << BigInt(8 * n);
    this.position += n;
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  }

  private readLine(): string {
    const end = this.bytes.indexOf(0x0a, this.position);
    if (end < 0) throw formatError('unterminated GLOBAL');
    const line = this.bytes.toString('latin1', this.position, end);
    this.position = end + 1;
    return line;
  }

  private call(callable: PickleValue, args: PickleValue): PickleValue {
    if (!isGlobal(callable) || !(args instanceof PickleTuple)) throw formatError('REDUCE on something other than a global');
    const qualified = `${callable.module}.${callable.name}`;
    const a = args.items;
    switch (qualified) {
      case 'collections.OrderedDict':
        return new Map();
      case 'torch._utils._rebuild_tensor':
      case 'torch._utils._rebuild_tensor_v2': {
        const [storage, offset, size, stride] = a;
        if (!isStorage(storage)) throw formatError('tensor without a storage');
        return { kind: 'tensor', storage, offset: asNumber(offset), shape: asNumberList(size), stride: asNumberList(stride) };
      }
      case 'torch._utils._rebuild_parameter':
        return a[0] ?? null;
      case '_codecs.encode':
        // Protocol 2 pickles Python 3 bytes as encode(text, 'latin1'): each character is one byte.
        if (typeof a[0] !== 'string' || a[1] !== 'latin1') throw formatError('unsupported _codecs.encode call');
        return Uint8Array.from(Buffer.from(a[0], 'latin1'));
      case 'numpy.core.multiarray._reconstruct':
      case 'numpy._core.multiarray._reconstruct':
        return { kind: 'ndarray', shape: [] };
      case 'numpy.dtype':
        if (typeof a[0] !== 'string') throw formatError('numpy dtype without a name');
        return { kind: 'dtype', name: a[0], byteOrder: '|' };
      default:
        return { kind: 'opaque', callable };
    }
  }

  /** ndarray state: (version, shape, dtype, is_fortran, raw bytes); dtype state: (version, byte order, ...). */
  private build(target: PickleValue, state: PickleValue): void {
    if (typeof target !== 'object' || target === null || !('kind' in target) || !(state instanceof PickleTuple)) return;
    if (target.kind === 'dtype') {
      const [, byteOrder] = state.items;
      if (typeof byteOrder === 'string') target.byteOrder = byteOrder;
    } else if (target.kind === 'ndarray') {
      const [, shape, dtype, fortran, data] = state.items;
      if (!isDtype(dtype) || !(data instanceof Uint8Array)) throw formatError('malformed numpy array state');
      if (fortran !== false) throw formatError('Fortran-ordered numpy arrays are not supported');
      target.shape = asNumberList(shape);
      target.dtype = dtype;
      target.data = data;
    }
  }

  private persistentLoad(pid: PickleValue): StorageRef {
    if (!(pid instanceof PickleTuple) || pid.items[0] !== 'storage') throw formatError('unsupported persistent id');
    const [, storageType, key, , size] = pid.items;
    if (storageType === undefined || !isGlobal(storageType) || typeof key !== 'string') throw formatError('malformed storage reference');
    const known = this.storages.get(key);
    if (known) return known;
    const storage: StorageRef = { kind: 'storage', key, dtype: storageType.name, elementCount: asNumber(size) };
    this.storages.set(key, storage);
    return storage;
  }

  private top(): PickleValue {
    const item = this.stack[this.stack.length - 1];
    if (item === undefined || item === markSentinel) throw formatError('stack underflow');
    return item;
  }

  private pop(): PickleValue {
    const item = this.stack.pop();
    if (item === undefined || item === markSentinel) throw formatError('stack underflow');
    return item;
  }

  private popN(n: number): PickleValue[] {
    const items: PickleValue[] = [];
    for (let i = 0; i < n; i++) items.unshift(this.pop());
    return items;
  }

  private popMark(): PickleValue[] {
    const index = this.stack.lastIndexOf(markSentinel);
    if (index < 0) throw formatError('no MARK on the stack');
    const items = this.stack.splice(index) as PickleValue[];
    items.shift();
    return items;
  }

  private memoGet(index: number): PickleValue {
    const value = this.memo.get(index);
    if (value === undefined) throw formatError(`memo entry ${index} missing`);
    return value;
  }

  private asList(value: PickleValue): PickleValue[] {
    if (!Array.isArray(value)) throw formatError('APPEND to a non-list');
    return value;
  }

  private asDict(value: PickleValue): Map<PickleValue, PickleValue> {
    if (!(value instanceof Map)) throw formatError('SETITEM on a non-dict');
    return value;
  }
}

function isGlobal(value: PickleValue): value is GlobalRef {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'global';
}

function isStorage(value: PickleValue | undefined): value is StorageRef {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'storage';
}

function isDtype(value: PickleValue | undefined): value is NumpyDtype {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'dtype';
}

function isNumpyArray(value: PickleValue): value is NumpyArray {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'ndarray';
}

function isTensor(value: PickleValue): value is TensorRef {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'tensor';
}

function asNumber(value: PickleValue | undefined): number {
  if (typeof value !== 'number') throw formatError('expected an integer');
  return value;
}

function asNumberList(value: PickleValue | undefined): number[] {
  if (!(value instanceof PickleTuple)) throw formatError('expected a tuple of integers');
  return value.items.map(asNumber);
}

/**
 * Reads the float tensors of a legacy `torch.save` file. `entry` picks a sub-dict of the saved dict (e.g. `model_state`
 * for a training checkpoint); without it the saved object itself must be the state dict. Values that are not tensors
 * are skipped. Tensors are returned contiguous (row-major), converted to float32.
 */
export async function readLegacyTorchStateDict(filePath: string, options: { entry?: string } = {}): Promise<Map<string, NamedTensor>> {
  const bytes = await readFile(filePath);
  const storages = new Map<string, StorageRef>();
  let position = 0;
  const next = (): PickleValue => {
    const unpickler = new Unpickler(bytes, position, storages);
    const value = unpickler.load();
    position = unpickler.end;
    return value;
  };
  const magic = next();
  if (magic !== legacyMagicNumber && !(typeof magic === 'number' && BigInt(magic) === legacyMagicNumber)) {
    throw formatError('not a legacy torch.save file (bad magic number; zip-format checkpoints are not handled here)');
  }
  if (next() !== legacyProtocolVersion) throw formatError('unsupported protocol version');
  next(); // system info: sizes and endianness, always little-endian for the files we read
  const root = next();
  const keys = next();
  if (!Array.isArray(keys)) throw formatError('storage key list missing');

  // Raw storages follow in key order: int64 element count, then the elements.
  const storageData = new Map<string, { byteOffset: number; elementCount: number }>();
  for (const key of keys) {
    if (typeof key !== 'string') throw formatError('storage key is not a string');
    const storage = storages.get(key);
    if (!storage) throw formatError(`storage ${key} listed but never referenced`);
    const type = storageTypes[storage.dtype];
    const elementSize = type?.bytes ?? elementSizeOf(storage.dtype);
    const elementCount = Number(bytes.readBigInt64LE(position));
    position += 8;
    storageData.set(key, { byteOffset: position, elementCount });
    position += elementCount * elementSize;
    if (position > bytes.length) throw formatError('truncated storage data');
  }

  return tensorsOf(root, options.entry, bytes, storageData);
}

/**
 * Reads the float tensors of a zip-format `torch.save` file (the object must be a state dict, or hold one under
 * `entry`). Integer tensors (BatchNorm's `num_batches_tracked`) are skipped.
 */
export async function readTorchZipStateDict(filePath: string, options: { entry?: string } = {}): Promise<Map<string, NamedTensor>> {
  const entries = new Map<string, Buffer>();
  const zip = await yauzl.openPromise(filePath, { lazyEntries: true });
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    entries.set(entry.fileName, Buffer.concat(chunks));
  }
  const pickleName = [...entries.keys()].find((name) => name.endsWith('/data.pkl'));
  if (!pickleName) throw formatError('not a zip-format torch.save file (no data.pkl)');
  const folder = pickleName.slice(0, -'data.pkl'.length);
  const storages = new Map<string, StorageRef>();
  const root = new Unpickler(entries.get(pickleName)!, 0, storages).load();

  // One buffer holding every storage, so tensors are read the same way as from a legacy file.
  const storageData = new Map<string, { byteOffset: number; elementCount: number }>();
  const parts: Buffer[] = [];
  let offset = 0;
  for (const storage of storages.values()) {
    const data = entries.get(`${folder}data/${storage.key}`);
    if (!data) throw formatError(`storage ${storage.key} has no data entry`);
    const elementSize = storageTypes[storage.dtype]?.bytes ?? elementSizeOf(storage.dtype);
    storageData.set(storage.key, { byteOffset: offset, elementCount: data.length / elementSize });
    parts.push(data);
    offset += data.length;
  }
  return tensorsOf(root, options.entry, Buffer.concat(parts), storageData, { skipIntegers: true });
}

function tensorsOf(
  root: PickleValue,
  entry: string | undefined,
  bytes: Buffer,
  storageData: Map<string, { byteOffset: number; elementCount: number }>,
  options: { skipIntegers?: boolean } = {},
): Map<string, NamedTensor> {
  let dict: PickleValue = root;
  if (entry !== undefined) {
    if (!(root instanceof Map) || !root.has(entry)) throw formatError(`no '${entry}' entry in the saved object`);
    dict = root.get(entry)!;
  }
  if (!(dict instanceof Map)) throw formatError('the state dict is not a dict');

  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tensors = new Map<string, NamedTensor>();
  for (const [name, value] of dict) {
    if (typeof name !== 'string' || !isTensor(value)) continue;
    const type = storageTypes[value.storage.dtype];
    if (!type && options.skipIntegers && value.storage.dtype in integerStorageSizes) continue;
    if (!type) throw formatError(`tensor ${name} has unsupported storage type ${value.storage.dtype}`);
    const raw = storageData.get(value.storage.key);
    if (!raw) throw formatError(`tensor ${name} refers to a storage without data`);
    tensors.set(name, { shape: value.shape, data: materialise(value, view, raw, type) });
  }
  return tensors;
}

/**
 * Reads a pickled dict of name -> little-endian float32 numpy array (e.g. the `data.pkl` inside a zip-format `.ckpt`
 * that holds numpy arrays rather than tensor storages). Values that are not arrays are skipped.
 */
export function readPickledNumpyArrays(pickle: Buffer): Map<string, NamedTensor> {
  const root = new Unpickler(pickle, 0, new Map()).load();
  if (!(root instanceof Map)) throw formatError('the pickled object is not a dict');
  const arrays = new Map<string, NamedTensor>();
  for (const [name, value] of root) {
    if (typeof name !== 'string' || !isNumpyArray(value)) continue;
    const { dtype, data, shape } = value;
    if (!dtype || !data) throw formatError(`numpy array ${name} has no data`);
    if (dtype.name !== 'f4' || dtype.byteOrder === '>')
      throw formatError(`numpy array ${name} is ${dtype.byteOrder}${dtype.name}, expected little-endian float32`);
    const count = shape.reduce((a, b) => a * b, 1);
    if (data.length !== count * 4) throw formatError(`numpy array ${name} has ${data.length} bytes for ${count} elements`);
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const values = new Float32Array(count);
    for (let i = 0; i < count; i++) values[i] = view.getFloat32(i * 4, true);
    arrays.set(name, { shape, data: values });
  }
  return arrays;
}

function materialise(
  tensor: TensorRef,
  view: DataView,
  raw: { byteOffset: number; elementCount: number },
  type: { bytes: number; read: (view: DataView, byteOffset: number) => number },
): Float32Array {
  const count = tensor.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(count);
  const index = new Array<number>(tensor.shape.length).fill(0);
  for (let i = 0; i < count; i++) {
    let element = tensor.offset;
    for (let d = 0; d < index.length; d++) element += index[d]! * tensor.stride[d]!;
    if (element >= raw.elementCount) throw formatError('tensor reaches past its storage');
    out[i] = type.read(view, raw.byteOffset + element * type.bytes);
    for (let d = index.length - 1; d >= 0; d--) {
      if (++index[d]! < tensor.shape[d]!) break;
      index[d] = 0;
    }
  }
  return out;
}

/** Sizes of storage types we skip over but do not convert (so files mixing them can still be read). */
const integerStorageSizes: Record<string, number> = {
  LongStorage: 8,
  IntStorage: 4,
  ShortStorage: 2,
  CharStorage: 1,
  ByteStorage: 1,
  BoolStorage: 1,
};

function elementSizeOf(dtype: string): number {
  const size = { ...integerStorageSizes, BFloat16Storage: 2 }[dtype];
  if (size === undefined) throw formatError(`unknown storage type ${dtype}`);
  return size;
}
