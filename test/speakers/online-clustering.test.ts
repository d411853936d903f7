/** Live speaker labels: utterances labelled one by one with CAM++ embeddings, on real speech of five eval speakers. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { CamppEncoder } from '../../src/speakers/campplus.js';
import { liveSameSpeakerSimilarity, OnlineSpeakers } from '../../src/speakers/online-clustering.js';
import { evalDir } from '../helpers/app.js';
import { camppModelPath } from '../helpers/models.js';

describe('OnlineSpeakers with CAM++', () => {
  let encoder: CamppEncoder;
  before(async () => {
    encoder = await CamppEncoder.load(await camppModelPath());
  });
  after(async () => {
    await encoder.close();
  });

  test('five speakers, each heard twice from different recordings, interleaved: one label per speaker', async () => {
    const clips = [
      'vc/resemblyzer_librispeech/3080-5032-0001.wav',
      'vc/resemblyzer_librispeech/2033-164914-0001.wav',
      'vc/resemblyzer_librispeech/1998-15444-0001.wav',
      'vc/resemblyzer_librispeech/3080-5032-0004.wav',
      'vc/resemblyzer_librispeech/3005-163389-0001.wav',
      'vc/resemblyzer_librispeech/2033-164914-0003.wav',
      'vc/pv_eagle/speaker_1_utt_1.wav',
      'vc/resemblyzer_librispeech/1998-15444-0006.wav',
      'vc/resemblyzer_librispeech/3005-163389-0008.wav',
      'vc/pv_eagle/speaker_1_utt_2.wav',
    ];
    const speakers = new OnlineSpeakers(async () => encoder, liveSameSpeakerSimilarity);
    const labels: string[] = [];
    for (const clip of clips)
      labels.push(await speakers.label((await decodeFile(path.join(evalDir, clip), { sampleRate: 16000, channels: 1 })).samples));
    assert.deepEqual(labels, [
      'SPEAKER_1',
      'SPEAKER_2',
      'SPEAKER_3',
      'SPEAKER_1',
      'SPEAKER_4',
      'SPEAKER_2',
      'SPEAKER_5',
      'SPEAKER_3',
      'SPEAKER_4',
      'SPEAKER_5',
    ]);
  });
});
