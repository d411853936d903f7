import { World } from '../src/audio/world.ts';
import { decodeFile } from '../src/audio/decode.ts';
import { worldAddon } from '../test/helpers/vc-assets.ts';
const world = World.load(await worldAddon());
const x = (await decodeFile('/work/shared/eval/vc/rtvc_samples/p240_00000.wav', { sampleRate: 16000, channels: 1 })).samples;
const o = { sampleRate: 16000, framePeriodMs: 5, fftSize: 1024, f0FloorHz: 60, f0CeilHz: 700 };
const dio = await world.f0(x, { ...o, harvest: false });
const hv = await world.f0(x, { ...o, harvest: true });
const a = await world.analyse(x, o);
// plain resynthesis, no conversion
const y = await world.synthesise(a, x.length, o);
const hy = await world.f0(y, { ...o, harvest: true });
function corr(p: Float64Array, q: Float64Array) { const xs=[],ys=[]; for (let t=0;t<Math.min(p.length,q.length);t++) if (p[t]!>0&&q[t]!>0){xs.push(Math.log(p[t]!));ys.push(Math.log(q[t]!));} const n=xs.length; const mx=xs.reduce((s,v)=>s+v,0)/n,my=ys.reduce((s,v)=>s+v,0)/n; let a=0,b=0,c=0; for(let i=0;i<n;i++){a+=(xs[i]-mx)*(ys[i]-my);b+=(xs[i]-mx)**2;c+=(ys[i]-my)**2;} return [a/Math.sqrt(b*c), n]; }
console.log('dio vs harvest', corr(dio, hv), 'resynth harvest vs harvest', corr(hy, hv));
let line=''; for (let t=0;t<hv.length;t+=10) line += `${Math.round(hv[t]!)}/${Math.round(dio[t]!)}/${Math.round(hy[t]!)} `; console.log(line);
