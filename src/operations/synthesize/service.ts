/** POST /v1/audio/tts: validation and orchestration. Engines plug in behind `Synthesizer`. */
import { audioFormats } from '../../audio/encode.js';
import { VoxError } from '../../errors.js';
import type { OperationResult, RequestContext } from '../../http/context.js';

import { emotions } from './emotion.js';

export { emotions, type Emotion } from './emotion.js';
export const maxTextCharacters = 5000;

export interface SynthesizeFields {
  text: string;
  voice_id: string;
  language?: string;
  emotion?: string;
  speed?: number;
  format?: string;
  sample_rate?: number;
  stream?: boolean;
}

export class SynthesisService {
  capabilities() {
    return { available: false, languages: [] as string[], emotions: [...emotions], formats: [...audioFormats], max_text_characters: maxTextCharacters };
  }

  async synthesize(fields: SynthesizeFields, _context: RequestContext): Promise<OperationResult> {
    if (fields.text.trim().length === 0) throw new VoxError('invalid_request', "'text' must not be empty.", { param: 'text' });
    if ([...fields.text].length > maxTextCharacters) {
      throw new VoxError('payload_too_large', `'text' has ${[...fields.text].length} characters; the limit is ${maxTextCharacters}.`, { param: 'text' });
    }
    throw new VoxError('not_implemented', 'Text-to-speech is not available yet on this server: its engine has not landed.');
  }
}
