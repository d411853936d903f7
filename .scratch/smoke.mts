import { World, defaultWorldAddonPath } from '/work/wt-vc/src/audio/world.ts';
import { decodeFile } from '/work/wt-vc/src/audio/decode.ts';
const w = World.load(defaultWorldAddonPath());
const wav = await decodeFile('/work/shared/eval/vc/resemblyzer_librispeech/3080-5032-0001.wav', { sampleRate: 16000, channels: 1 });
const o = { sampleRate: 16000, framePeriodMs: 5, fftSize: 1024, f0FloorHz: 60, f0CeilHz: 600 };
const dur = wav.samples.length / 16000;
for (const harvest of [false, true]) {
  let t = performance.now();
  const a = await w.analyse(wav.samples, { ...o, harvest });
  const ta = performance.now() - t; t = performance.now();
  const y = await w.synthesise(a, wav.samples.length, o);
  const ts = performance.now() - t;
  const f = await w.f0(wav.samples, { ...o, harvest });
  const voiced = [...a.f0].filter(x => x > 0);
  console.log({ harvest, dur, rtfAnalyse: ta / 1000 / dur, rtfSynth: ts / 1000 / dur, frames: a.f0.length, voiced: voiced.length, median: voiced.sort((p,q)=>p-q)[voiced.length>>1], y: y.length, f0len: f.length });
}
