import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { SileroVad } from '../../src/audio/vad.js';
import { sileroVoiceFlags } from '../../src/audio/silence.js';
import { cosineSimilarity, partialStarts, SpeakerEncoder } from '../../src/speakers/embedding.js';
import { evalDir, sharedModelsDir } from '../helpers/app.js';
import { ge2eModelPath } from '../helpers/models.js';

interface VcEntry {
  id: string;
  audio: string;
  speaker: string;
}
const clips = (JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { vc: VcEntry[] }).vc;
const sameSpeakerThreshold = 0.75;

describe('partial utterances (Resemblyzer rules)', () => {
  test('160-frame partials every 77 frames; the last kept only if 75% covered; always one', () => {
    assert.deepEqual(partialStarts(8000), [0]);
    assert.deepEqual(partialStarts(160 * 160), [0]);
    // 3 s = 301 frames: partials at 0, 77, 154 (the one at 154 ends at frame 314, covered (48000 - 24640) / 25600 = 91%).
    assert.deepEqual(partialStarts(48000), [0, 77, 154]);
    // 2.2 s: the partial at 77 would be covered (35200 - 12320) / 25600 = 89%: kept.
    assert.deepEqual(partialStarts(35200), [0, 77]);
    // 1.9 s: the partial at 77 is covered only (30400 - 12320) / 25600 = 71%: dropped.
    assert.deepEqual(partialStarts(30400), [0]);
  });
});

describe('GE2E speaker encoder on real speech', () => {
  let encoder: SpeakerEncoder;
  const embeddings = new Map<string, Float32Array>();

  before(async () => {
    encoder = await SpeakerEncoder.load(await ge2eModelPath(), { threads: 2 });
    for (const clip of clips) {
      const waveform = await decodeFile(path.join(evalDir, clip.audio), { sampleRate: 16000, channels: 1 });
      embeddings.set(clip.id, await encoder.embedUtterance(waveform));
    }
  });
  after(() => encoder.close());

  test('embeddings are 256 non-negative floats of unit norm', () => {
    for (const [id, embedding] of embeddings) {
      assert.equal(embedding.length, 256, id);
      assert.ok(
        embedding.every((v) => v >= 0),
        id,
      );
      assert.ok(Math.abs(Math.hypot(...embedding) - 1) < 1e-5, id);
    }
  });

  test(`same speaker > ${sameSpeakerThreshold} > different speakers on the eval/vc clips`, (t) => {
    const same: string[] = [];
    const different: number[] = [];
    for (let i = 0; i < clips.length; i++) {
      for (let j = i + 1; j < clips.length; j++) {
        const a = clips[i]!;
        const b = clips[j]!;
        const similarity = cosineSimilarity(embeddings.get(a.id)!, embeddings.get(b.id)!);
        if (a.speaker === b.speaker) {
          same.push(`${a.id} ~ ${b.id}: ${similarity.toFixed(3)}`);
          assert.ok(similarity > sameSpeakerThreshold, `same speaker ${a.id} / ${b.id}: ${similarity}`);
        } else {
          different.push(similarity);
          assert.ok(similarity < sameSpeakerThreshold, `different speakers ${a.id} / ${b.id}: ${similarity}`);
        }
      }
    }
    assert.ok(same.length >= 5);
    t.diagnostic(`same speaker: ${same.join('; ')}`);
    t.diagnostic(
      `different speakers: ${different.length} pairs, mean ${(different.reduce((x, y) => x + y, 0) / different.length).toFixed(3)}, max ${Math.max(...different).toFixed(3)}`,
    );
  });

  test('Silero VAD can replace the energy detector for trimming; embeddings barely move', async () => {
    const vad = await SileroVad.load(path.join(sharedModelsDir, 'silero-vad', 'silero_vad.onnx'));
    const withSilero = await SpeakerEncoder.load(await ge2eModelPath(), { voiceFlags: sileroVoiceFlags(vad) });
    try {
      const clip = clips[0]!;
      const waveform = await decodeFile(path.join(evalDir, clip.audio), { sampleRate: 16000, channels: 1 });
      assert.ok(cosineSimilarity(await withSilero.embedUtterance(waveform), embeddings.get(clip.id)!) > 0.98);
    } finally {
      await withSilero.close();
      await vad.close();
    }
  });

  test('partials batched together give the utterance embedding they give one at a time', async () => {
    const clip = clips.find((c) => c.id.startsWith('pv_eagle/'))!;
    const waveform = await decodeFile(path.join(evalDir, clip.audio), { sampleRate: 16000, channels: 1 });
    const single = await SpeakerEncoder.load(await ge2eModelPath(), { batchSize: 1 });
    try {
      assert.ok(cosineSimilarity(await single.embedUtterance(waveform), await encoder.embedUtterance(waveform)) > 0.99999);
    } finally {
      await single.close();
    }
  });

  test('only 16 kHz mono is accepted', async () => {
    await assert.rejects(encoder.embedUtterance({ samples: new Float32Array(48000), sampleRate: 24000, channels: 1 }), /16 kHz mono/);
  });
});
