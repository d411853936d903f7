p='src/operations/convert/engines/world-dsp.ts'
s=open(p).read()
def rep(a,b):
    global s
    if a not in s: print('MISSING', repr(a[:70])); return
    s=s.replace(a,b)
def cut(start, end_marker):
    global s
    i=s.find(start); j=s.find(end_marker,i)
    if i<0 or j<0: print('MISSING cut', repr(start[:50])); return
    s=s[:i]+s[j+len(end_marker):]
rep("import { setImmediate as yieldToEventLoop } from 'node:timers/promises';\n","")
rep("import { bandBins, CepstralSmoother, MelCepstrum, warpEnvelope, warpSourcePositions }","import { bandBins, CepstralSmoother, warpEnvelope, warpSourcePositions }")
rep("const featureOrder = 19;\n","")
rep("  mcep: MelCepstrum;\n","")
rep("  features: Float32Array;\n","")
rep("  featureSum = new Float64Array(featureOrder);\n  featureSquares = new Float64Array(featureOrder);\n","")
cut("      for (let q = 0; q < featureOrder; q++) {\n        const v = measures.features","      }\n")
cut("    const featureMean = new Float32Array(featureOrder);","    }\n")
rep("      featureMean,\n      featureStd,\n","")
rep("  featureMean: Float32Array;\n  featureStd: Float32Array;\n","")
rep("      mcep: new MelCepstrum(sampleRate, fftSize, 40, featureOrder, 80, 7600),\n","")
rep("      featureMean: stats.featureMean,\n      featureStd: stats.featureStd,\n","")
rep("    const features = new Float32Array(count * featureOrder);\n","")
rep("      this.shared.mcep.compute(row, features, t * featureOrder);\n","")
rep("    return { count, bandLog, speech, features };","    return { count, bandLog, speech };")
rep("    featureMean: blob('featureMean'),\n    featureStd: blob('featureStd'),\n","")
cut("function standardise(","\n}\n")
rep("    features: measures.features.subarray(from * featureOrder, to * featureOrder),\n","")
open(p,'w').write(s)
p='bench/vc.ts'
s=open(p).read()
s=s.replace("  classWeight?: number;\n","").replace(", classWeight: options.classWeight","").replace(" 'class-weight': { type: 'string' },","")
s=s.replace("    classWeight: values['class-weight'] ? Number(values['class-weight']) : undefined,\n","").replace(" [--class-weight w]","")
open(p,'w').write(s)
