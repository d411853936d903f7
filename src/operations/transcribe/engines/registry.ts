/** The transcription engine: whisper.cpp with the configured model (a catalog id or a ggml file's path). */
import path from 'node:path';
import { catalog } from '../../../models/catalog/index.js';
import type { EngineEntry } from '../../../models/loaded.js';
import type { Transcriber } from '../transcriber.js';

/** Whose audio encoder whisper runs: the model's float32 ONNX graph, its int8 one, or whisper.cpp's own. */
export const whisperEncoderChoices = ['onnx', 'onnx-int8', 'ggml'] as const;
export type WhisperEncoderChoice = (typeof whisperEncoderChoices)[number];

export function transcriptionEngine(options: { model: string; encoder: WhisperEncoderChoice }): EngineEntry<Transcriber> {
  // A path loads any ggml file as is; a catalog id loads the verified install.
  const isPath = options.model.includes('/') || options.model.endsWith('.bin');
  const spec = isPath ? undefined : catalog.find((s) => s.id === options.model);
  // The model's ONNX encoder when it has one and it is installed (pulled with the model), unless whisper.cpp's is asked for.
  const encoderId = spec && options.encoder !== 'ggml' ? spec.onnxEncoders?.[options.encoder] : undefined;
  const fileOf = (modelId: string): string => catalog.find((s) => s.id === modelId)!.files[0]!.name;
  return {
    id: options.model,
    operations: ['transcribe'],
    modelIds: isPath ? [] : [options.model],
    load: async ({ dir, installedDir, threads }) => {
      const modelPath = isPath ? options.model : path.join(dir(options.model), fileOf(options.model));
      const encoderDir = encoderId ? await installedDir(encoderId) : undefined;
      const { WhisperCppTranscriber } = await import('./whisper-cpp.js');
      return WhisperCppTranscriber.load(modelPath, {
        modelId: isPath ? path.basename(modelPath) : options.model,
        threads,
        ...(encoderId && encoderDir ? { encoderPath: path.join(encoderDir, fileOf(encoderId)) } : {}),
      });
    },
    release: async (engine) => engine.close?.(),
  };
}
