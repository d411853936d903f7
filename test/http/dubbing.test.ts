/**
 * POST /v1/dubbing on the real app: a two-speaker clip over music (eval speech and a separation music stem) as a video,
 * dubbed as a job: stages, line timing, a voice per speaker deleted afterwards, the dubbed audio, dialogue, video with
 * its picture copied, subtitles; and the checks made before a job is accepted.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { DubbedLine } from '../../src/operations/dub/service.js';
import { buildTestApp, evalDir, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { clipSeconds, dubbingClip, placements } from '../helpers/dubbing.js';
import { sleep } from '../helpers/jobs.js';

const run = promisify(execFile);

interface DubResult {
  source_language: string;
  target_language: string;
  task: string;
  duration: number;
  files: Record<string, { url: string; content_type: string } | null>;
  voices: Array<{ speaker: string; voice_id: string; cloned: boolean; temporary: boolean }>;
  lines: DubbedLine[];
  warnings: string[];
}

interface JobView {
  id: string;
  status: string;
  operation: string;
  progress: { stage: string; fraction: number } | null;
  result: DubResult | null;
  error: { code: string; message: string } | null;
}

async function probe(file: string, entries: string, stream = 'v:0'): Promise<string> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    stream,
    '-count_packets',
    '-show_entries',
    entries,
    '-of',
    'csv=p=0',
    file,
  ]);
  return stdout.trim();
}

async function audioSeconds(file: string): Promise<number> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return Number(stdout.trim());
}

describe('dubbing', () => {
  let t: TestApp;
  let dir: string;
  let video: string;

  before(async () => {
    t = await buildTestApp();
    t.container.jobWorker.start();
    dir = makeTempDir('dubbing');
    ({ video } = await dubbingClip(dir));
  });
  after(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const post = (fields: Record<string, string>, file?: string) => {
    const { body, contentType } = multipartBody(
      fields,
      file ? { audio: { filename: path.basename(file), content: readFileSync(file) } } : {},
    );
    return t.app.inject({
      method: 'POST',
      url: '/v1/dubbing',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': contentType },
      payload: body,
    });
  };
  const download = async (url: string, name: string): Promise<string> => {
    const response = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(response.statusCode, 200);
    const file = path.join(dir, name);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, response.rawPayload);
    return file;
  };

  /** Polls a job until it ends; `onProgress` sees each progress report on the way. */
  const finishedJob = async (id: string, onProgress?: (progress: NonNullable<JobView['progress']>) => void): Promise<JobView> => {
    for (const deadline = Date.now() + 540_000; ; await sleep(200)) {
      const job = (await t.app.inject({ url: `/v1/jobs/${id}`, headers: { authorization: `Bearer ${t.key}` } })).json<JobView>();
      if (job.progress) onProgress?.(job.progress);
      if (['succeeded', 'failed', 'cancelled'].includes(job.status)) return job;
      assert.ok(Date.now() < deadline, 'the dub did not finish in time');
    }
  };

  test('a video with two speakers over music is re-voiced as a job, each in a voice cloned from their own speech', async () => {
    const accepted = await post({ target_language: 'en', consent: 'true', num_speakers: '2', format: 'wav' }, video);
    assert.equal(accepted.statusCode, 202, accepted.body);
    const submitted = accepted.json<JobView>();
    assert.equal(submitted.operation, 'dub');
    assert.equal(accepted.headers.location, `/v1/jobs/${submitted.id}`);

    const stages = new Set<string>();
    const job = await finishedJob(submitted.id, (progress) => stages.add(progress.stage));
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    // The language is detected: the speech goes through Whisper's translate task (English, so it comes out transcribed).
    for (const stage of ['separating', 'translating', 'voicing', 'mixing'])
      assert.ok(stages.has(stage), `stage ${stage} seen: ${[...stages]}`);
    const result = job.result!;
    assert.equal(result.source_language, 'en');
    assert.equal(result.task, 'transcribe');

    // A voice per speaker, cloned and gone once the dub is done.
    assert.equal(new Set(result.voices.map((v) => v.speaker)).size, 2);
    assert.equal(new Set(result.voices.map((v) => v.voice_id)).size, 2);
    for (const voice of result.voices) {
      assert.ok(voice.cloned && voice.temporary);
      const looked = await t.app.inject({ url: `/v1/voices/${voice.voice_id}`, headers: { authorization: `Bearer ${t.key}` } });
      assert.equal(looked.statusCode, 404);
    }

    // Each line starts where its source line does; the speakers' first lines where their speech was placed.
    assert.ok(result.lines.length >= 2);
    for (const line of result.lines) {
      assert.ok(Math.abs(line.dubbedStartSeconds - line.sourceStartSeconds) <= 0.3, JSON.stringify(line));
      assert.ok(line.tempo >= 1 && line.tempo <= 1.25);
      assert.ok(line.text.length > 0);
    }
    const firstStarts = result.voices
      .map((v) => result.lines.find((l) => l.speaker === v.speaker)!.sourceStartSeconds)
      .sort((a, b) => a - b);
    for (const [i, p] of placements.entries())
      assert.ok(Math.abs(firstStarts[i]! - p.atSeconds) < 0.8, `first line at ${firstStarts[i]}, placed at ${p.atSeconds}`);

    // The dubbed audio and the dialogue alone last as long as the input.
    const dubbed = await download(result.files.audio!.url, 'dubbed.wav');
    const dialogue = await download(result.files.dialogue!.url, 'dialogue.wav');
    for (const file of [dubbed, dialogue]) assert.ok(Math.abs((await audioSeconds(file)) - clipSeconds) < 0.1);

    // The video keeps its picture as it was (same codec, same frames); its sound is the dub.
    const dubbedVideo = await download(result.files.video!.url, 'dubbed.mp4');
    assert.equal(await probe(dubbedVideo, 'stream=codec_name'), await probe(video, 'stream=codec_name'));
    assert.equal(await probe(dubbedVideo, 'stream=nb_read_packets'), await probe(video, 'stream=nb_read_packets'));
    assert.equal(await probe(dubbedVideo, 'stream=codec_name', 'a:0'), 'aac');

    // Subtitles of the dubbed speech, with speakers.
    const srt = readFileSync(await download(result.files.transcript_srt!.url, 'dub.srt'), 'utf8');
    const cues = srt.trim().split(/\n\n+/);
    assert.ok(cues.length >= 2);
    for (const cue of cues) assert.match(cue, /^\d+\n\d{2}:\d{2}:\d{2},\d{3} --> \d{2}:\d{2}:\d{2},\d{3}\n.+/);
    const vtt = readFileSync(await download(result.files.transcript_vtt!.url, 'dub.vtt'), 'utf8');
    assert.match(vtt, /^WEBVTT/);
  });

  test('an audio input with a voice named per speaker and no background: the dub is the dubbed dialogue alone', async () => {
    const voices = { SPEAKER_1: 'af_heart', SPEAKER_2: 'am_adam' };
    const accepted = await post(
      {
        target_language: 'en',
        source_language: 'en',
        voices: JSON.stringify(voices),
        num_speakers: '2',
        keep_background: 'false',
        format: 'wav',
      },
      path.join(dir, 'clip.wav'),
    );
    assert.equal(accepted.statusCode, 202, accepted.body);
    const id = accepted.json<JobView>().id;
    const job = await finishedJob(id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const result = job.result!;
    assert.deepEqual(
      result.voices.map(({ speaker, voice_id, cloned }) => ({ speaker, voice_id, cloned })),
      Object.entries(voices).map(([speaker, voice_id]) => ({ speaker, voice_id, cloned: false })),
    );
    assert.equal(result.files.video, null);
    const samples = async (url: string, name: string): Promise<Float32Array> => {
      const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', await download(url, name), '-f', 'f32le', '-'], {
        encoding: 'buffer',
        maxBuffer: 64 * 1024 * 1024,
      });
      return new Float32Array(stdout.buffer, stdout.byteOffset, stdout.byteLength / 4);
    };
    const dubbed = await samples(result.files.audio!.url, 'voiced.wav');
    const dialogue = await samples(result.files.dialogue!.url, 'voiced-dialogue.wav');
    assert.equal(dubbed.length, dialogue.length);
    let speech = 0;
    let difference = 0;
    for (let i = 0; i < dubbed.length; i++) {
      speech += dialogue[i]! ** 2;
      difference += (dubbed[i]! - dialogue[i]!) ** 2;
    }
    assert.ok(speech > 0 && difference / speech < 1e-4, `dub minus dialogue at ${(10 * Math.log10(difference / speech)).toFixed(1)} dB`);
  });

  test('one speaker holding two voices (num_speakers=1) is cloned from their longest turn, not voiced by a built-in voice', async () => {
    // The joined turns hold the woman and the man: voice creation refuses them; the longest turn alone is one voice.
    const accepted = await post(
      { target_language: 'en', source_language: 'en', consent: 'true', num_speakers: '1', keep_background: 'false', format: 'wav' },
      path.join(dir, 'clip.wav'),
    );
    assert.equal(accepted.statusCode, 202, accepted.body);
    const id = accepted.json<JobView>().id;
    const job = await finishedJob(id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const result = job.result!;
    assert.deepEqual(
      result.voices.map(({ speaker, cloned, temporary }) => ({ speaker, cloned, temporary })),
      [{ speaker: 'SPEAKER_1', cloned: true, temporary: true }],
      JSON.stringify(result.warnings),
    );
    assert.ok(!result.warnings.some((w) => w.includes('could not be cloned')), JSON.stringify(result.warnings));
  });

  test('bad requests are refused before a job is accepted', async () => {
    const audio = path.join(evalDir, placements[0]!.file);
    const cases: Array<{ fields: Record<string, string>; file?: string; status: number; param: string }> = [
      { fields: { target_language: 'en', consent: 'true' }, status: 400, param: 'audio' },
      { fields: { target_language: 'en' }, file: audio, status: 400, param: 'consent' },
      { fields: { target_language: 'de', source_language: 'en', consent: 'true' }, file: audio, status: 422, param: 'target_language' },
      { fields: { target_language: 'en', voices: 'somebody' }, file: audio, status: 400, param: 'voices' },
      { fields: { target_language: 'en', voices: '{"SPEAKER_1": "voice_none"}' }, file: audio, status: 404, param: 'voices' },
    ];
    for (const { fields, file, status, param } of cases) {
      const response = await post(fields, file);
      assert.equal(response.statusCode, status, `${JSON.stringify(fields)}: ${response.body}`);
      const { error } = response.json<{ error: { param: string; message: string } }>();
      assert.equal(error.param, param);
      if (status === 422) assert.match(error.message, /Whisper translates only into English/);
    }
    const jobs = await t.app.inject({ url: '/v1/jobs?operation=dub', headers: { authorization: `Bearer ${t.key}` } });
    // Only the three dubs of the tests before this one.
    assert.equal(jobs.json<{ data: unknown[] }>().data.length, 3);
  });
});
