import { World } from '../src/audio/world.ts';
import { decodeFile } from '../src/audio/decode.ts';
import { speakerF0Range } from '../src/operations/convert/engines/world-dsp.ts';
import { worldAddon } from '../test/helpers/vc-assets.ts';
import { readdirSync } from 'node:fs';
const world = World.load(await worldAddon());
for (const d of ['resemblyzer_librispeech', 'rtvc_samples', 'pv_eagle']) for (const f of readdirSync('/work/shared/eval/vc/' + d)) {
  const x = (await decodeFile(`/work/shared/eval/vc/${d}/${f}`, { sampleRate: 16000, channels: 1 })).samples;
  const o = { sampleRate: 16000, framePeriodMs: 5, fftSize: 1024, f0FloorHz: 60, f0CeilHz: 700, harvest: true };
  const f0 = await world.f0(x, { ...o, ...(await speakerF0Range(world, x, o)) });
  const logs = Float64Array.from(f0.filter((v) => v > 0).map(Math.log)).sort();
  const m = logs[logs.length >> 1]!; const dev = logs.map(v => Math.abs(v - m)).sort();
  console.log(d, f, Math.exp(m).toFixed(0), (1.4826 * dev[dev.length >> 1]!).toFixed(3));
}
