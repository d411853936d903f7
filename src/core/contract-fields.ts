/**
 * Field types the operations' contracts share. A contract is a TypeBox schema: the HTTP route validates with it and
 * documents it in OpenAPI, the job worker and the CLI type their calls with `Static<>` of it.
 */
import { Kind, Type, TypeRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { VoxError } from './errors.js';

/** Longest id (voices, jobs, files; also the longest path parameter the router accepts); ids are far shorter. */
export const maxIdLength = 100;
/** BCP-47 tags in practice stay far below this. */
export const maxLanguageLength = 35;

/** A file input. Over HTTP a multipart part, streamed to disk; the field's value is then only a marker (see uploads.ts). */
export const fileField = (description: string) => Type.String({ format: 'binary', description });

/** A string from a fixed list: a JSON Schema `enum` of strings, which TypeBox's checker knows by this kind. */
const closedSetKind = 'ClosedSet';
TypeRegistry.Set<{ enum: string[] }>(closedSetKind, (schema, value) => typeof value === 'string' && schema.enum.includes(value));
export const closedSet = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ [Kind]: closedSetKind, type: 'string', enum: [...values], description });

export const sampleRateField = Type.Integer({
  minimum: 8000,
  maximum: 192000,
  description: 'Output sample rate in Hz (default: see each route).',
});

/**
 * A call's fields as its contract types them: what a route validated, or a job recorded when its route did, checked
 * again where it is run (a job's parameters come from storage). A mismatch is the caller's 400, naming the field.
 */
export function contractFields<T extends TSchema>(contract: T, fields: unknown): Static<T> {
  if (Value.Check(contract, fields)) return fields;
  const [first] = Value.Errors(contract, fields);
  const param = first?.path.replace(/^\//, '').split('/')[0] || undefined;
  const allowed = (first?.schema as { enum?: string[] } | undefined)?.enum;
  const reason = allowed ? `must be one of ${allowed.join(', ')}` : (first?.message ?? 'does not match the contract');
  throw new VoxError('invalid_request', `Invalid request field${param ? ` '${param}'` : ''}: ${reason}.`, param ? { param } : {});
}
