import { World } from '../src/audio/world.ts';
import { decodeFile } from '../src/audio/decode.ts';
import { WorldDspConverter } from '../src/operations/convert/engines/world-dsp.ts';
import { SpeakerEncoder } from '../src/speakers/embedding.ts';
import { ge2eOnnx, worldAddon } from '../test/helpers/vc-assets.ts';
const world = World.load(await worldAddon());
const times: Record<string, number> = {};
for (const m of ['f0', 'analyse', 'synthesise'] as const) {
  const orig = (world as any)[m].bind(world);
  (world as any)[m] = async (...a: any[]) => { const t = performance.now(); const r = await orig(...a); times[m] = (times[m] ?? 0) + performance.now() - t; return r; };
}
const enc = await SpeakerEncoder.load(await ge2eOnnx(), { threads: 2 });
const origEmbed = enc.embedUtterance.bind(enc);
(enc as any).embedUtterance = async (...a: any[]) => { const t = performance.now(); const r = await origEmbed(...a); times.embed = (times.embed ?? 0) + performance.now() - t; return r; };
const conv = new WorldDspConverter(world, enc);
const tgt = await decodeFile('/work/shared/eval/vc/resemblyzer_librispeech/3080-5032-0001.wav', { sampleRate: 16000, channels: 1 });
const profile = await conv.analyseTarget([tgt]);
for (const k of Object.keys(times)) delete times[k];
const src = await decodeFile('/work/shared/eval/vc/rtvc_samples/p260_00000.wav', { channels: 1 });
const t0 = performance.now();
const r = await conv.convert(src, profile, { preserveEmotion: true });
const total = performance.now() - t0;
console.log({ total, dur: src.samples.length / src.sampleRate, times, f0c: r.f0Correlation, warnings: r.warnings });
