/** POST /v1/audio/vc: validation and orchestration. The engine plugs in behind `VoiceConverter`. */
import { audioFormats } from '../../audio/encode.js';
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import { VoxError } from '../../errors.js';
import type { OperationResult, RequestContext } from '../../http/context.js';

export interface ConvertFields {
  target_voice_id: string;
  preserve_emotion?: boolean;
  format?: string;
  sample_rate?: number;
  response_format?: string;
}

export class VoiceConversionService {
  constructor(private readonly limits: AudioLimits) {}

  capabilities() {
    return { available: false, formats: [...audioFormats], preserve_emotion: true };
  }

  async convert(fields: ConvertFields, context: RequestContext): Promise<OperationResult> {
    await admitAudio(uploadedFile(context.uploads, 'audio'), this.limits, context.signal);
    throw new VoxError('not_implemented', 'Voice conversion is not available yet on this server: its engine has not landed.');
  }
}
