import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { decodeBlocks, decodeFile, probeAudio, scanAudioSeconds } from '../../src/audio/decode.js';
import { audioFormats, encodeWaveform, peakSafe } from '../../src/audio/encode.js';
import { resample } from '../../src/audio/resample.js';
import { durationSeconds, peak, rmsDb, toMono } from '../../src/audio/waveform.js';
import { evalDir, makeTempDir } from '../helpers/app.js';

const speechPath = path.join(evalDir, 'asr/pv_leopard/test.wav');
const stereoMixPath = path.join(evalDir, 'sep/dnr_mix01/mixture.wav');

describe('decode', () => {
  const dir = makeTempDir('codecs');
  const fixtures: Array<[string, string[]]> = [
    ['speech.mp3', ['-c:a', 'libmp3lame', '-b:a', '96k']],
    ['speech.flac', ['-c:a', 'flac']],
    ['speech.ogg', ['-c:a', 'libopus', '-b:a', '48k']],
    ['speech.m4a', ['-c:a', 'aac', '-b:a', '96k']],
    ['speech.webm', ['-c:a', 'libopus']],
    ['speech.mkv', ['-f', 'lavfi', '-i', 'color=c=black:s=64x64:d=5.855', '-shortest', '-c:v', 'libx264', '-c:a', 'aac']],
  ];

  for (const [name, args] of fixtures) {
    test(`decodes ${name} made with ffmpeg to 16 kHz mono of the same duration`, async () => {
      const target = path.join(dir, name);
      const isVideo = args.includes('lavfi');
      const inputs = isVideo ? ['-i', speechPath, ...args.slice(0, 6)] : ['-i', speechPath];
      const codec = isVideo ? args.slice(6) : args;
      execFileSync('ffmpeg', ['-v', 'error', '-y', ...inputs, ...codec, target]);
      const waveform = await decodeFile(target, { sampleRate: 16000, channels: 1 });
      assert.equal(waveform.sampleRate, 16000);
      assert.equal(waveform.channels, 1);
      assert.ok(Math.abs(durationSeconds(waveform) - 5.855) < 0.1, `${name}: ${durationSeconds(waveform)} s`);
      assert.ok(rmsDb(waveform.samples) > -40, 'speech is audible');
    });
  }

  test('keeps the source rate and channels when not asked to change them', async () => {
    const probe = await probeAudio(stereoMixPath);
    const waveform = await decodeFile(stereoMixPath);
    assert.equal(waveform.channels, probe.channels);
    assert.equal(waveform.sampleRate, probe.sampleRate);
    assert.ok(Math.abs(durationSeconds(waveform) - probe.durationSeconds) < 0.01);
  });

  test('streams blocks of the requested size', async () => {
    let frames = 0;
    let blocks = 0;
    for await (const block of decodeBlocks(speechPath, { sampleRate: 16000, channels: 1, blockFrames: 16000 })) {
      blocks++;
      frames += block.length;
      assert.ok(block.length <= 16000);
    }
    assert.equal(blocks, 6);
    assert.equal(frames, 93680);
  });

  test('stops a stream past maxSeconds with 413, handing on nothing past the limit', async () => {
    const blocks = decodeBlocks(speechPath, { sampleRate: 16000, channels: 1, blockFrames: 8000, maxSeconds: 2 });
    let frames = 0;
    await assert.rejects(
      async () => {
        for await (const block of blocks) frames += block.length;
      },
      (error: { code?: string; message?: string }) =>
        error.code === 'payload_too_large' && /more than 2 s; the limit is 2 s/.test(error.message ?? ''),
    );
    assert.ok(frames <= 2 * 16000, `${frames} frames`);
  });

  test('measures a pipe-written FLAC, which declares no length, by a packet scan that stops just past the limit', async () => {
    const target = path.join(dir, 'piped.flac');
    writeFileSync(target, execFileSync('ffmpeg', ['-v', 'error', '-i', speechPath, '-c:a', 'flac', '-f', 'flac', '-']));
    assert.ok(Number.isNaN((await probeAudio(target)).durationSeconds));
    assert.ok(Math.abs((await scanAudioSeconds(target, 7200)) - 5.855) < 0.15);
    const stopped = await scanAudioSeconds(target, 2);
    assert.ok(stopped > 2 && stopped <= 3, `${stopped} s`);
  });

  test('replaces NaN and Inf samples with silence', async () => {
    const samples = new Float32Array(8000).map((_, i) => Math.sin(i / 10) * 0.5);
    samples[100] = NaN;
    samples[200] = Infinity;
    samples[300] = -Infinity;
    const header = Buffer.alloc(44);
    header.write('RIFF', 0);
    header.writeUInt32LE(36 + samples.byteLength, 4);
    header.write('WAVEfmt ', 8);
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(3, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(8000, 24);
    header.writeUInt32LE(32000, 28);
    header.writeUInt16LE(4, 32);
    header.writeUInt16LE(32, 34);
    header.write('data', 36);
    header.writeUInt32LE(samples.byteLength, 40);
    const target = path.join(dir, 'nan.wav');
    writeFileSync(target, Buffer.concat([header, Buffer.from(samples.buffer)]));
    const waveform = await decodeFile(target);
    assert.ok(waveform.samples.every(Number.isFinite));
    assert.equal(waveform.samples[100], 0);
    assert.ok(Math.abs(waveform.samples[50]! - samples[50]!) < 1e-6);
  });
});

describe('encode', () => {
  for (const format of audioFormats) {
    test(`${format} round-trips through the decoder`, async () => {
      const source = await decodeFile(speechPath, { sampleRate: 16000, channels: 1 });
      const bytes = await encodeWaveform(source, { format, sampleRate: 24000 });
      const dir = makeTempDir('enc');
      const file = path.join(dir, `out.${format === 'opus' ? 'ogg' : format}`);
      writeFileSync(file, bytes);
      const decoded =
        format === 'pcm'
          ? { samples: new Float32Array(bytes.length / 2).map((_, i) => bytes.readInt16LE(i * 2) / 32768), sampleRate: 24000, channels: 1 }
          : await decodeFile(file);
      const expectedRate = format === 'opus' ? 48000 : 24000;
      assert.equal(decoded.sampleRate, expectedRate);
      assert.ok(Math.abs(durationSeconds(decoded) - 5.855) < 0.08, `${format}: ${durationSeconds(decoded)}`);
      assert.ok(Math.abs(rmsDb(decoded.samples) - rmsDb(source.samples)) < 1.5, `${format} keeps the level`);
    });
  }

  test('a streaming encoder turns chunks into one continuous stream', async () => {
    const { startEncoder } = await import('../../src/audio/encode.js');
    const source = await decodeFile(speechPath, { sampleRate: 16000, channels: 1 });
    const encoder = startEncoder({ format: 'mp3', inputSampleRate: 16000, channels: 1, sampleRate: 24000 });
    const received: Buffer[] = [];
    encoder.output.on('data', (chunk: Buffer) => received.push(chunk));
    const done = new Promise((resolve) => encoder.output.on('end', resolve));
    // Output must start after the first second of input, not after ffmpeg has probed several seconds of it.
    const firstBytes = new Promise<boolean>((resolve) => {
      encoder.output.once('data', () => resolve(true));
      setTimeout(() => resolve(false), 3000);
    });
    await encoder.write(source.samples.subarray(0, 16000));
    if (!(await firstBytes)) {
      encoder.abort();
      assert.fail('no bytes while the input is still open');
    }
    for (let offset = 16000; offset < source.samples.length; offset += 16000)
      await encoder.write(source.samples.subarray(offset, offset + 16000));
    encoder.end();
    await done;
    const dir = makeTempDir('stream');
    writeFileSync(path.join(dir, 'out.mp3'), Buffer.concat(received));
    const decoded = await decodeFile(path.join(dir, 'out.mp3'));
    assert.ok(Math.abs(durationSeconds(decoded) - 5.855) < 0.1);
  });

  test('24-bit and float wav', async () => {
    const source = await decodeFile(speechPath);
    for (const [wavSampleFormat, bits] of [
      ['s24', 24],
      ['f32', 32],
    ] as const) {
      const bytes = await encodeWaveform(source, { format: 'wav', wavSampleFormat });
      assert.equal(bytes.readUInt16LE(34), bits);
    }
  });

  test('peak-safe: a waveform over full scale is scaled, not clipped', async () => {
    const samples = new Float32Array(16000).map((_, i) => 1.8 * Math.sin((2 * Math.PI * 440 * i) / 16000));
    const safe = peakSafe(samples);
    assert.ok(peak(safe) <= 0.99);
    const ratio = safe[1000]! / samples[1000]!;
    assert.ok(
      safe.every((v, i) => Math.abs(v - samples[i]! * ratio) < 1e-6),
      'one gain for all samples: the shape is kept',
    );
    const bytes = await encodeWaveform({ samples, sampleRate: 16000, channels: 1 }, { format: 'wav' });
    const pcm = new Int16Array(bytes.buffer.slice(bytes.byteOffset + 44, bytes.byteOffset + bytes.length));
    assert.ok(Math.max(...pcm) < 32767 && Math.min(...pcm) > -32768);
  });

  test('resample keeps duration and level; toMono averages channels', async () => {
    const stereo = await decodeFile(stereoMixPath);
    const mono = toMono(stereo);
    assert.equal(mono.channels, 1);
    const down = await resample(mono, 16000);
    assert.ok(Math.abs(durationSeconds(down) - durationSeconds(mono)) < 0.01);
    assert.ok(Math.abs(rmsDb(down.samples) - rmsDb(mono.samples)) < 1);
  });
});
