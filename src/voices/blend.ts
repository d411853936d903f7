/**
 * Blended voices, as Kokoro-FastAPI writes them: `af_bella*0.6+am_adam*0.4` speaks with the weighted mix of the voices'
 * style vectors, the weights normalised to sum to 1 (a part without `*weight` weighs 1, so `af_bella+am_adam` is 50/50).
 */
import { VoxError } from '../core/errors.js';

/** The engine whose voices are style vectors that mix (its Synthesizer.blends): Kokoro. */
export const blendingEngine = 'kokoro';
/** More parts add nothing audible and only cost style-table reads. */
export const maxBlendParts = 8;

export interface BlendPart {
  voiceId: string;
  /** Normalised: the parts' weights sum to 1. */
  weight: number;
}

/** Whether a voice id is written as a blend (a single plain id is not). */
export const isBlendId = (voiceId: string): boolean => voiceId.includes('+') || voiceId.includes('*');

/**
 * The parts of a blend written as `id*weight+id*weight`, weights normalised; a 400 naming the part that is malformed or
 * weighs nothing. Each voice appears once (a repeated one would only be its weights added up: refused as a likely typo).
 */
export function parseBlend(written: string, param = 'voice_id'): BlendPart[] {
  const parts = written.split('+').map((part) => part.trim());
  if (parts.length > maxBlendParts)
    throw new VoxError('invalid_request', `A blend has at most ${maxBlendParts} voices; '${written}' has ${parts.length}.`, { param });
  const parsed = parts.map((part) => {
    const match = /^([A-Za-z0-9_.-]+)(?:\*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))?$/.exec(part);
    if (!match) {
      throw new VoxError(
        'invalid_request',
        `Blend part '${part}' of '${written}' is malformed: write each part as voice_id*weight (e.g. af_bella*0.6+am_adam*0.4).`,
        { param },
      );
    }
    const weight = match[2] === undefined ? 1 : Number(match[2]);
    if (!(weight > 0) || !Number.isFinite(weight))
      throw new VoxError('invalid_request', `Blend part '${part}' of '${written}' must weigh more than 0.`, { param });
    return { voiceId: match[1]!, weight };
  });
  const repeated = parsed.find((part, index) => parsed.findIndex((p) => p.voiceId === part.voiceId) !== index);
  if (repeated) throw new VoxError('invalid_request', `Voice '${repeated.voiceId}' appears twice in blend '${written}'.`, { param });
  if (parsed.length < 2) throw new VoxError('invalid_request', `A blend mixes at least two voices; '${written}' names one.`, { param });
  const total = parsed.reduce((sum, part) => sum + part.weight, 0);
  return parsed.map((part) => ({ voiceId: part.voiceId, weight: part.weight / total }));
}
