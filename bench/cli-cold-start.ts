/**
 * CPU seconds of `voxd transcribe` on a 1 s clip from a fresh process (issue 35, point 5; target <= 3 CPU-s with the default
 * language=auto): node's start, imports, model loads and inference, as the user pays them. Each run is a new process
 * (user + system CPU by GNU time, children included) of the built CLI (dist/: `npm run build` first); medians of BENCH_ROUNDS
 * (default 5), runs alternated between `--language auto` and `--language en`, and the process CPU of node doing nothing.
 * BENCH_BASELINE=<another built checkout> runs that one's CLI too, alternated with this one's, for a before/after in one run.
 * Where the time goes: one more fresh process per language (and checkout) runs the CLI's steps through the built modules
 * and reads its own CPU time after each (imports, container, VAD load, Whisper load, then within the transcription each
 * whisper.cpp call: language detection, decoding with the temperature it was accepted at; ffmpeg's CPU as children).
 * The clip is the first second of LDC93S1 (../shared/eval/asr), as in bench/asr-side-by-side.ts.
 * Results: bench/results/cli-cold-start.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../src/core/version.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const checkouts = { current: packageRoot, ...(process.env.BENCH_BASELINE ? { baseline: path.resolve(process.env.BENCH_BASELINE) } : {}) };
const cliOf = (root: string): string => path.join(root, 'dist/src/cli/main.js');
for (const root of Object.values(checkouts))
  if (!existsSync(cliOf(root))) throw new Error(`${cliOf(root)} is missing: run npm run build there first.`);
const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const clip = path.join(tmpdir(), 'voxd-cold-start-1s.wav');
execFileSync('ffmpeg', [
  '-v',
  'error',
  '-y',
  '-i',
  path.join(evalDir, 'asr/deepspeech/LDC93S1.wav'),
  '-t',
  '1',
  '-ac',
  '1',
  '-ar',
  '16000',
  clip,
]);

function timed(args: string[]): { cpuSeconds: number; wallSeconds: number; text: string } {
  const child = spawnSync('/usr/bin/time', ['-f', 'voxd-bench-time %U %S %e', ...args], { encoding: 'utf8' });
  const line = child.stderr.split('\n').find((l) => l.startsWith('voxd-bench-time'));
  if (child.status !== 0 || !line) throw new Error(`${args.join(' ')} failed: ${child.stderr}`);
  const [user, system, wall] = line.split(' ').slice(1).map(Number) as [number, number, number];
  return { cpuSeconds: user + system, wallSeconds: wall, text: child.stdout.trim() };
}

const loadAtStart = loadavg()[0]!;
const languages = ['auto', 'en'] as const;
const runs = new Map<string, Array<ReturnType<typeof timed>>>();
const nodeAlone: number[] = [];
for (let i = 0; i < rounds; i++) {
  for (const language of languages)
    for (const [name, root] of Object.entries(checkouts)) {
      const key = `${name} ${language}`;
      runs.set(key, [
        ...(runs.get(key) ?? []),
        timed([process.execPath, cliOf(root), 'transcribe', clip, '--language', language, '--format', 'text']),
      ]);
    }
  nodeAlone.push(timed([process.execPath, '-e', '0']).cpuSeconds);
}
/** The CLI's steps in a fresh process of a checkout, with the process CPU seconds each one cost. */
function stages(root: string, language: string): Record<string, number | string> {
  const dist = (module: string): string => JSON.stringify(pathToFileURL(path.join(root, 'dist/src', module)).href);
  const script = `
    import { readFileSync } from 'node:fs';
    let last = process.cpuUsage();
    const stages = {};
    const mark = (name) => { const used = process.cpuUsage(last); last = process.cpuUsage(); stages[name] = (stages[name] ?? 0) + (used.user + used.system) / 1e6; };
    // Children's CPU (ffprobe, ffmpeg) once they have exited: /proc/self/stat's cutime and cstime, in clock ticks.
    const childrenSeconds = () => readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ').slice(13, 15).reduce((s, t) => s + Number(t), 0) / 100;
    const { loadConfig } = await import(${dist('config.js')});
    const { createContainer } = await import(${dist('container.js')});
    const { transcribeFile } = await import(${dist('operations/transcribe/pipeline.js')});
    const { WhisperModel } = await import(${dist('operations/transcribe/engines/whisper-native.js')});
    mark('imports');
    const transcribe = WhisperModel.prototype.transcribe;
    const accepted = [];
    WhisperModel.prototype.transcribe = async function (samples, options, signal) {
      mark('transcription_other');
      const result = await transcribe.call(this, samples, options, signal);
      if (!options.detectOnly) accepted.push(result.temperature);
      mark(options.detectOnly ? 'language_detection' : 'decoding');
      return result;
    };
    const container = await createContainer(loadConfig());
    mark('container');
    const vad = await container.operations.transcription.deps.vad();
    mark('vad_load');
    const transcriber = await container.operations.transcription.deps.transcriber();
    mark('whisper_load');
    await transcribeFile({ transcriber, vad }, { path: ${JSON.stringify(clip)}, language: ${JSON.stringify(language)}, speakers: {}, maxAudioSeconds: 60 });
    mark('transcription_other');
    await container.close();
    mark('close');
    stages.ffmpeg_children = childrenSeconds();
    stages.accepted_temperatures = accepted.join(',');
    process.stdout.write(JSON.stringify(stages));`;
  // A file, not -e: under tsx, node's -e code is read as CommonJS.
  const file = path.join(tmpdir(), 'voxd-cold-start-stages.mjs');
  writeFileSync(file, script);
  const child = spawnSync(process.execPath, [file], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`stages (${language}) failed: ${child.stderr}`);
  const measured = JSON.parse(child.stdout) as Record<string, number | string>;
  return Object.fromEntries(Object.entries(measured).map(([name, value]) => [name, typeof value === 'number' ? round(value) : value]));
}

const summary = (name: string, root: string, language: string) => {
  const list = runs.get(`${name} ${language}`)!;
  return {
    cpu_seconds: round(median(list.map((r) => r.cpuSeconds))),
    wall_seconds: round(median(list.map((r) => r.wallSeconds))),
    cpu_seconds_all: list.map((r) => round(r.cpuSeconds)),
    text: list[0]!.text,
    stages_cpu_seconds: stages(root, language),
  };
};
const results = {
  measured_at: new Date().toISOString(),
  input: '1 s clip (LDC93S1, first second)',
  rounds,
  load_average_1min_at_start: round(loadAtStart),
  load_average_1min_at_end: round(loadavg()[0]!),
  target_cpu_seconds: 3,
  node_alone_cpu_seconds: round(median(nodeAlone)),
  ...Object.fromEntries(languages.map((language) => [`language_${language}`, summary('current', checkouts.current, language)])),
  ...(checkouts.baseline
    ? {
        baseline: {
          checkout: process.env.BENCH_BASELINE_LABEL ?? checkouts.baseline,
          ...Object.fromEntries(languages.map((language) => [`language_${language}`, summary('baseline', checkouts.baseline!, language)])),
        },
      }
    : {}),
};
writeFileSync(path.join(packageRoot, 'bench/results/cli-cold-start.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
