/**
 * First use (issue 32): how long a new user waits, on this machine.
 * - setup: `scripts/setup.sh` into an empty models directory (the other steps, system packages, npm and the native
 *   builds, already done: they are skipped when done), then a second run of it.
 * - the built-in voices' analysis alone (the speaker embeddings of the 28 English Kokoro voices, the set prepared
 *   with the models) into an empty analysis store.
 * - on a fresh data dir, once /v1/ready: creating a cloned voice (two clips), its first TTS, the first conversion to a
 *   built-in voice (which computes that voice's conversion statistics from its kept reference speech) and a second one,
 *   then the first and second cloned-voice TTS in Spanish (the first analyses the Spanish voices).
 * Targets: analysis <= 60 s, setup into empty models <= 5 min, second setup <= 30 s, first cloned TTS and first
 * conversion to a built-in voice < 5 s. Writes bench/results/first-use.json.
 *
 * Run: node --import tsx bench/first-use.ts [--no-setup]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../src/core/version.js';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../test/helpers/app.js';
import { modelsDirWithoutDerived } from '../test/helpers/models.js';

const { values: options } = parseArgs({ options: { 'no-setup': { type: 'boolean', default: false } } });
const seconds = (since: number): number => Math.round((performance.now() - since) / 10) / 100;
const clip = (name: string): Buffer => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));

/** Wall-clock seconds of one setup run (it must succeed). */
function timeSetup(modelsDir: string): number {
  const startedAt = performance.now();
  const run = spawnSync('bash', ['scripts/setup.sh'], {
    cwd: packageRoot,
    env: { ...process.env, VOXD_MODELS_DIR: modelsDir },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`setup failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  return seconds(startedAt);
}

async function timed(what: string, request: () => Promise<{ statusCode: number; body: string }>): Promise<number> {
  const startedAt = performance.now();
  const response = await request();
  if (response.statusCode >= 300) throw new Error(`${what}: ${response.statusCode} ${response.body}`);
  return seconds(startedAt);
}

async function convertTo(t: TestApp, voiceId: string): Promise<number> {
  const form = multipartBody({ target_voice_id: voiceId }, { audio: { filename: 'source.wav', content: clip('2033-164914-0001.wav') } });
  return timed('conversion', () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/audio/vc',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    }),
  );
}

const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  load_average_1min_at_start: Math.round(loadavg()[0]! * 100) / 100,
};

if (!options['no-setup']) {
  const modelsDir = mkdtempSync(path.join(tmpdir(), 'voxd-bench-models-'));
  try {
    const emptyModelsSeconds = timeSetup(modelsDir);
    results.setup = { empty_models_dir_seconds: emptyModelsSeconds, second_run_seconds: timeSetup(modelsDir) };
  } finally {
    rmSync(modelsDir, { recursive: true, force: true });
  }
  process.stdout.write(`setup: ${JSON.stringify(results.setup)}\n`);
}

// An analysis store of its own, the models linked from the installed ones.
const modelsDir = modelsDirWithoutDerived();
const analysis = await buildTestApp({ VOXD_MODELS_DIR: modelsDir });
try {
  await analysis.container.synthesizers.get('kokoro-82m')!.get();
  const startedAt = performance.now();
  const cpuBefore = process.cpuUsage();
  const voices = await analysis.container.operations.synthesis.prepareBuiltinVoices();
  const cpu = process.cpuUsage(cpuBefore);
  // CPU seconds do not grow with other work on the machine as wall seconds do (half of them is the wall time of 2 busy cores).
  results.builtin_voice_analysis = { voices, seconds: seconds(startedAt), cpu_seconds: Math.round((cpu.user + cpu.system) / 1e4) / 100 };
} finally {
  await analysis.close();
}
process.stdout.write(`built-in voice analysis: ${JSON.stringify(results.builtin_voice_analysis)}\n`);

const t = await buildTestApp({ VOXD_MODELS_DIR: modelsDir });
try {
  await t.container.preload();
  const voice = multipartBody(
    { name: 'Reader 3080', consent: 'true', language: 'en' },
    {
      files: [
        { filename: 'a.wav', content: clip('3080-5032-0001.wav') },
        { filename: 'b.wav', content: clip('3080-5032-0004.wav') },
      ],
    },
  );
  let voiceId = '';
  const createSeconds = await timed('voice creation', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': voice.contentType },
      payload: voice.body,
    });
    voiceId = created.json().voice_id as string;
    return created;
  });
  const ttsSeconds = await timed('cloned-voice TTS', () =>
    t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { text: 'Please leave a message after the tone.', voice_id: voiceId, format: 'wav' },
    }),
  );
  const firstConversionSeconds = await convertTo(t, 'am_michael');
  const secondConversionSeconds = await convertTo(t, 'am_michael');
  const computedBeforeSpanish = t.container.voices.builtinAnalysesComputed;
  const spanishSeconds = () =>
    timed('cloned-voice TTS in Spanish', () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: { authorization: `Bearer ${t.key}` },
        payload: { text: 'Por favor, deje su mensaje después de la señal.', voice_id: voiceId, language: 'es', format: 'wav' },
      }),
    );
  const firstSpanishSeconds = await spanishSeconds();
  const spanishAnalyses = t.container.voices.builtinAnalysesComputed - computedBeforeSpanish;
  const secondSpanishSeconds = await spanishSeconds();
  results.first_requests = {
    voice_creation_seconds: createSeconds,
    first_cloned_tts_seconds: ttsSeconds,
    first_conversion_to_builtin_seconds: firstConversionSeconds,
    second_conversion_to_builtin_seconds: secondConversionSeconds,
    builtin_analyses_computed_by_requests: computedBeforeSpanish,
    // A language outside the prepared set: its first cloned speech analyses that language's voices.
    first_cloned_tts_in_spanish_seconds: firstSpanishSeconds,
    builtin_analyses_computed_by_it: spanishAnalyses,
    second_cloned_tts_in_spanish_seconds: secondSpanishSeconds,
  };
} finally {
  await t.close();
  rmSync(modelsDir, { recursive: true, force: true });
}
process.stdout.write(`first requests: ${JSON.stringify(results.first_requests)}\n`);

// Timings depend on what else the machine runs: the load is kept with them.
results.load_average_1min_at_end = Math.round(loadavg()[0]! * 100) / 100;
writeFileSync(path.join(packageRoot, 'bench/results/first-use.json'), `${JSON.stringify(results, null, 2)}\n`);
