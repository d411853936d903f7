/**
 * DTLN (Westhausen & Meyer 2020) speech enhancement on onnxruntime-node: 16 kHz, block 512 / shift 128.
 * Stage 1 predicts a magnitude mask from the block's rFFT; stage 2 refines the masked block in a learned time domain.
 * Both stages carry LSTM state [1, 2, 128, 2] from block to block, so memory is flat in duration.
 */
import path from 'node:path';
import ort from 'onnxruntime-node';
import { RealFft } from '../../../audio/fft.js';
import type { DialogueModel } from './dialogue-model.js';

const blockLength = 512;
const blockShift = 128;
const bins = blockLength / 2 + 1;

export class DtlnModel implements DialogueModel {
  readonly id = 'dtln';
  readonly sampleRate = 16000;
  /** The streaming loop outputs a block's first samples once it is complete: 3 shifts late. */
  private readonly delaySamples = blockLength - blockShift;

  private constructor(
    private readonly stage1: ort.InferenceSession,
    private readonly stage2: ort.InferenceSession,
  ) {}

  static async load(modelDir: string): Promise<DtlnModel> {
    const options: ort.InferenceSession.SessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
    const stage1 = await ort.InferenceSession.create(path.join(modelDir, 'model_1.onnx'), options);
    const stage2 = await ort.InferenceSession.create(path.join(modelDir, 'model_2.onnx'), options);
    return new DtlnModel(stage1, stage2);
  }

  async close(): Promise<void> {
    await Promise.all([this.stage1.release(), this.stage2.release()]);
  }

  async enhance(samples: Float32Array, signal?: AbortSignal): Promise<Float32Array> {
    const fft = new RealFft(blockLength);
    const input = new Float32Array(blockLength);
    const outputBuffer = new Float32Array(blockLength);
    const re = new Float64Array(bins);
    const im = new Float64Array(bins);
    const magnitude = new Float32Array(bins);
    const block = new Float32Array(blockLength);
    let state1: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128 * 2), [1, 2, 128, 2]);
    let state2: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128 * 2), [1, 2, 128, 2]);
    const [in1, in1State] = this.stage1.inputNames as [string, string];
    const [out1, out1State] = this.stage1.outputNames as [string, string];
    const [in2, in2State] = this.stage2.inputNames as [string, string];
    const [out2, out2State] = this.stage2.outputNames as [string, string];

    const total = samples.length + this.delaySamples;
    const output = new Float32Array(samples.length);
    const blocks = Math.ceil(total / blockShift);
    for (let b = 0; b < blocks; b++) {
      if (b % 256 === 0 && signal?.aborted) throw signal.reason;
      input.copyWithin(0, blockShift);
      for (let i = 0; i < blockShift; i++) {
        const j = b * blockShift + i;
        input[blockLength - blockShift + i] = j < samples.length ? samples[j]! : 0;
      }
      fft.forward(input, re, im);
      for (let k = 0; k < bins; k++) magnitude[k] = Math.hypot(re[k]!, im[k]!);
      const r1 = await this.stage1.run({ [in1]: new ort.Tensor('float32', magnitude, [1, 1, bins]), [in1State]: state1 });
      const mask = r1[out1]!.data as Float32Array;
      state1 = r1[out1State] as ort.Tensor;
      for (let k = 0; k < bins; k++) {
        re[k] = re[k]! * mask[k]!;
        im[k] = im[k]! * mask[k]!;
      }
      fft.inverse(re, im, block);
      const r2 = await this.stage2.run({ [in2]: new ort.Tensor('float32', block, [1, 1, blockLength]), [in2State]: state2 });
      const refined = r2[out2]!.data as Float32Array;
      state2 = r2[out2State] as ort.Tensor;
      outputBuffer.copyWithin(0, blockShift);
      outputBuffer.fill(0, blockLength - blockShift);
      for (let i = 0; i < blockLength; i++) outputBuffer[i]! += refined[i]!;
      // outputBuffer[0..shift) is final: it is input sample (b*shift - delay) onward.
      const start = b * blockShift - this.delaySamples;
      for (let i = 0; i < blockShift; i++) {
        const j = start + i;
        if (j >= 0 && j < output.length) output[j] = outputBuffer[i]!;
      }
    }
    return output;
  }
}
