p='src/operations/convert/engines/world-dsp.ts'
s=open(p).read()
def cut(start, end_marker, include_end=True):
    global s
    i=s.find(start)
    if i<0: print('MISSING start', repr(start[:50])); return
    j=s.find(end_marker,i)
    if j<0: print('MISSING end', repr(end_marker[:50])); return
    if include_end: j+=len(end_marker)
    s=s[:i]+s[j:]
def rep(a,b):
    global s
    if a not in s: print('MISSING', repr(a[:60])); return
    s=s.replace(a,b)
for c in ["const gridPoints = 96;\n","const maxBankFrames = 6000;\n","const neighbours = 6;\n"]: rep(c,"")
cut("/** The class-wise correction only tilts","\n"); cut("const classQuefrencies","\n")
cut("  /** 0..1: how far the per-class correction","  classWeight?: number;\n")
rep("import { bandBins, CepstralSmoother, MelCepstrum, MelGrid, warpEnvelope, warpSourcePositions }","import { bandBins, CepstralSmoother, MelCepstrum, warpEnvelope, warpSourcePositions }")
rep("  grid: MelGrid;\n","")
rep("  classSmoother: CepstralSmoother;\n","")
rep("      grid: new MelGrid(sampleRate, fftSize, gridPoints),\n","")
rep("      classSmoother: new CepstralSmoother(bins, classQuefrencies),\n","")
rep('''  bankFeatures: number[] = [];
  bankGrids: number[] = [];
  bankVoiced: number[] = [];

  constructor(private readonly shared: Shared, private readonly keepBank: boolean) {}
''','')
rep("    const grid = new Float32Array(gridPoints);\n",'')
cut("      if (this.keepBank) {","        this.bankVoiced.push(voiced ? 1 : 0);\n      }\n")
rep("new SpeakerAccumulator(this.shared, true)","new SpeakerAccumulator()"); rep("new SpeakerAccumulator(this.shared, false)","new SpeakerAccumulator()")
cut("    const bankFrames = accumulator.bankVoiced.length;","      bankVoiced[i] = accumulator.bankVoiced[source]!;\n    }\n")
rep('''      featureStd: stats.featureStd,
      bankFeatures,
      bankGrids,
      bankVoiced,
    };''','''      featureStd: stats.featureStd,
    };''')
cut("/** A neighbour bank: standardised","/** Everything fixed for one conversion. */",False)
rep("interface TargetModel extends SpeakerStats, Bank {","interface TargetModel extends SpeakerStats {")
cut("  /** Standardised, L2-normalised features of the reference frames. */","  bankVoiced: Float32Array;\n")
rep("  private readonly classWeight: number;\n","")
rep("    this.classWeight = options.classWeight ?? 0.5;\n","")
rep("    const classes = await this.classMeans(analysis, measures, plan, signal);\n","")
rep("const converted = this.applyPlan(analysis, measures, { ...plan, alpha: key }, classes);","const converted = this.applyPlan(analysis, measures, { ...plan, alpha: key });")
cut("  private async convertFrames(","  }\n\n")
rep("const converted = await this.convertFrames(analysis, measures, plan, signal);","const converted = this.applyPlan(analysis, measures, plan);")
rep("  private applyPlan(analysis: WorldAnalysis, measures: FrameMeasures, plan: Plan, classes: ClassMeans): WorldAnalysis {","  private applyPlan(analysis: WorldAnalysis, measures: FrameMeasures, plan: Plan): WorldAnalysis {")
rep("    const { band, grid } = this.shared;","    const { band } = this.shared;")
rep('''    const targetClass = new Float64Array(bins);
    const sourceClass = new Float64Array(bins);
    const correction = new Float64Array(bins);
''','')
cut("      if (measures.speech[t] && this.classWeight > 0) {","        for (let k = 0; k < bins; k++) warped[k] = warped[k]! + this.classWeight * (correction[k]! - eq[k]!);\n      }\n")
cut("  /** Per speech frame: mean envelopes of the frames most like it","    return { bankFeatures, bankGrids, bankVoiced };\n  }\n")
cut("/**\n * For each speech frame, the mean energy-normalised envelope (mel grid) of its nearest bank frames","  return smooth;\n}\n")
cut("  const bankFeatures = Float32Array.from(blob('bankFeatures'));","    for (let q = 0; q < featureOrder; q++) bankFeatures[i + q] = bankFeatures[i + q]! / norm;\n  }\n")
rep('''    embedding: profile.blobs.embedding ?? null,
    bankFeatures,
    bankGrids: blob('bankGrids'),
    bankVoiced: blob('bankVoiced'),''','''    embedding: profile.blobs.embedding ?? null,''')
open(p,'w').write(s)
