/** Naming diarized speakers: the assignment, the speech chosen per speaker, and CAM++ utterance embeddings on real speech. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { CamppEncoder } from '../../src/speakers/campplus.js';
import { cosineSimilarity } from '../../src/speakers/embedding.js';
import { matchSpeakers, maximumAssignment, speakerMatchSimilarity, speechToEmbed } from '../../src/speakers/identification.js';
import { evalDir } from '../helpers/app.js';
import { camppModelPath } from '../helpers/models.js';

describe('maximumAssignment (Hungarian)', () => {
  /** Every one-to-one assignment of rows to columns, by brute force: the largest total gain. */
  function bestTotal(gains: number[][]): number {
    const columns = gains[0]!.length;
    const search = (row: number, used: Set<number>): number => {
      if (row === gains.length) return 0;
      let best = search(row + 1, used);
      for (let c = 0; c < columns; c++) {
        if (used.has(c)) continue;
        used.add(c);
        best = Math.max(best, gains[row]![c]! + search(row + 1, used));
        used.delete(c);
      }
      return best;
    };
    return search(0, new Set());
  }

  test('matches brute force on square and rectangular matrices; each column taken once', () => {
    let seed = 7;
    const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (const [rows, columns] of [
      [1, 1],
      [3, 3],
      [4, 2],
      [2, 5],
      [5, 5],
      [6, 4],
    ] as const) {
      for (let trial = 0; trial < 20; trial++) {
        const gains = Array.from({ length: rows }, () => Array.from({ length: columns }, () => (next() < 0.3 ? 0 : next())));
        const assignment = maximumAssignment(gains);
        const taken = assignment.filter((c) => c >= 0);
        assert.equal(new Set(taken).size, taken.length);
        assert.equal(taken.length, Math.min(rows, columns));
        const total = assignment.reduce((sum, c, r) => sum + (c >= 0 ? gains[r]![c]! : 0), 0);
        assert.ok(Math.abs(total - bestTotal(gains)) < 1e-9, `${rows}x${columns}: ${total} vs ${bestTotal(gains)}`);
      }
    }
  });
});

describe('matchSpeakers', () => {
  /** A unit vector in the first two dimensions, at this angle: similarities are cosines of angle differences. */
  const at = (degrees: number) => Float32Array.from([Math.cos((degrees * Math.PI) / 180), Math.sin((degrees * Math.PI) / 180), 0]);

  test('one-to-one by the largest total margin over the threshold, not greedily; speakers under it stay unnamed', () => {
    // SPEAKER_1 is 0.9 like A and 0.7 like B; SPEAKER_2 0.85 like A, -0.23 like B. Greedy gives A to SPEAKER_1 and
    // leaves SPEAKER_2 unnamed; margins over 0.5 sum to more with SPEAKER_1 -> B (0.2) and SPEAKER_2 -> A (0.35).
    const speakers = new Map([
      ['SPEAKER_1', at(25.84)],
      ['SPEAKER_2', at(-31.79)],
      ['SPEAKER_3', Float32Array.from([0, 0, 1])],
    ]);
    const profiles = [
      { voiceId: 'A', embedding: at(0) },
      { voiceId: 'B', embedding: at(71.41) },
    ];
    const matches = matchSpeakers(speakers, profiles, 0.5);
    assert.equal(matches.get('SPEAKER_1')?.voiceId, 'B');
    assert.equal(matches.get('SPEAKER_2')?.voiceId, 'A');
    assert.ok(Math.abs(matches.get('SPEAKER_2')!.similarity - 0.85) < 1e-3);
    assert.equal(matches.get('SPEAKER_3'), undefined, 'like no profile');
    // At a threshold only SPEAKER_1 -> A passes, that is the one pair.
    assert.deepEqual(
      [...matchSpeakers(speakers, profiles, 0.88)].map(([id, m]) => [id, m.voiceId]),
      [['SPEAKER_1', 'A']],
    );
  });
});

describe('speechToEmbed', () => {
  test("a speaker's turns without the time others talk over them, longest first, up to the cap", () => {
    const spans = speechToEmbed(
      [
        { speaker: 'SPEAKER_1', startSeconds: 0, endSeconds: 10 },
        { speaker: 'SPEAKER_2', startSeconds: 9, endSeconds: 30 },
        { speaker: 'SPEAKER_1', startSeconds: 29.8, endSeconds: 31 },
        { speaker: 'SPEAKER_3', startSeconds: 40, endSeconds: 40.3 },
      ],
      15,
    );
    assert.deepEqual(spans.get('SPEAKER_1'), [
      { startSeconds: 0, endSeconds: 9 },
      { startSeconds: 30, endSeconds: 31 },
    ]);
    // 10-29.8 is clean (19.8 s), cut to the 15 s cap.
    assert.deepEqual(spans.get('SPEAKER_2'), [{ startSeconds: 10, endSeconds: 25 }]);
    // Nothing clean of 0.5 s: the turn as it is.
    assert.deepEqual(spans.get('SPEAKER_3'), [{ startSeconds: 40, endSeconds: 40.3 }]);
  });
});

describe('CAM++ utterance embeddings on real speech', () => {
  let encoder: CamppEncoder;
  before(async () => {
    encoder = await CamppEncoder.load(await camppModelPath(), { threads: 2 });
  });
  after(async () => encoder.close());

  const vc = (JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { vc: Array<{ audio: string; speaker: string }> })
    .vc;
  const load = (entry: { audio: string }) => decodeFile(path.join(evalDir, entry.audio), { sampleRate: 16000, channels: 1 });

  test('an utterance is the pooled window over all its frames; over a minute, pieces add up to one embedding of the speaker', async () => {
    const clip = await load(vc[0]!);
    const whole = await encoder.embedUtterance(clip);
    const [pooled] = encoder.embedSpans(await encoder.frames(clip.samples), [{ startSeconds: 0, endSeconds: clip.samples.length / 16000 }]);
    assert.ok(cosineSimilarity(whole, pooled!) > 0.99999);
    // 70 s of one speaker: two network runs (60 s + 10 s) pooled together.
    const long = new Float32Array(70 * 16000);
    for (let at = 0; at < long.length; at += clip.samples.length)
      long.set(clip.samples.subarray(0, Math.min(clip.samples.length, long.length - at)), at);
    const longEmbedding = await encoder.embedUtterance({ samples: long, sampleRate: 16000, channels: 1 });
    assert.ok(cosineSimilarity(longEmbedding, whole) > 0.9, `${cosineSimilarity(longEmbedding, whole)}`);
  });

  test('the matching threshold separates the two clips of each eval speaker from other speakers', async () => {
    const speakers = [...new Set(vc.map((e) => e.speaker))].filter((s) => vc.filter((e) => e.speaker === s).length >= 2);
    const embeddings = new Map<string, Float32Array[]>();
    for (const speaker of speakers) {
      const clips = vc.filter((e) => e.speaker === speaker).slice(0, 2);
      embeddings.set(speaker, [await encoder.embedUtterance(await load(clips[0]!)), await encoder.embedUtterance(await load(clips[1]!))]);
    }
    for (const a of speakers) {
      const [first, second] = embeddings.get(a)!;
      assert.ok(cosineSimilarity(first!, second!) >= speakerMatchSimilarity, `${a}: ${cosineSimilarity(first!, second!)}`);
      for (const b of speakers.filter((s) => s !== a))
        assert.ok(cosineSimilarity(first!, embeddings.get(b)![1]!) < speakerMatchSimilarity, `${a} vs ${b}`);
    }
  });
});
