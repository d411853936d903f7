/**
 * Pronunciation dictionaries, shaped like ElevenLabs': a W3C PLS lexicon uploaded under a name becomes an ordered list of
 * rules, which speech requests name (pronunciation_dictionary_ids) to have words said their way. A dictionary is its
 * creating key's (and admin keys'); to any other key it does not exist (404), as cloned voices.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Type, type Static } from '@sinclair/typebox';
import { mayAccess } from '../auth/api-keys.js';
import { maxIdLength, maxLanguageLength } from '../core/contract-fields.js';
import { VoxError } from '../core/errors.js';
import type { OperationContext, OperationResult } from '../core/operation-context.js';
import type { ApiKeyRecord, PronunciationDictionaryRecord } from '../core/records.js';
import type { Store } from '../storage/store.js';
import type { PronunciationRule } from './contract.js';
import { alphabets, maxGraphemeCharacters, maxPronunciationCharacters, maxRules, parsePls } from './pls.js';

/** A speech request applies at most this many dictionaries, in the order it names them. */
export const maxDictionariesPerRequest = 3;
/** PLS files are text: far below any upload limit. */
const maxLexiconBytes = 1024 * 1024;

const grapheme = Type.String({ minLength: 1, maxLength: maxGraphemeCharacters });
const graphemes = Type.Array(grapheme, {
  minItems: 1,
  maxItems: 50,
  description: 'Written forms, matched case-sensitively as whole words.',
});
const language = Type.String({
  minLength: 1,
  maxLength: maxLanguageLength,
  description: "BCP-47 tag; the rule applies to speech whose language's primary subtag matches.",
});
/** A rule as the API shows and takes it: the shape synthesis applies (contract.ts). */
export const pronunciationRuleSchema = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('alias'),
      graphemes,
      alias: Type.String({ minLength: 1, maxLength: maxPronunciationCharacters, description: 'Text said instead.' }),
      language,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      kind: Type.Literal('phoneme'),
      graphemes,
      phonemes: Type.String({ minLength: 1, maxLength: maxPronunciationCharacters }),
      alphabet: Type.Union(alphabets.map((a) => Type.Literal(a))),
      language,
    },
    { additionalProperties: false },
  ),
]);

export const createDictionaryBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  file: Type.String({ format: 'binary', description: 'A W3C PLS 1.0 lexicon (alphabet ipa or x-sampa), at most 1 MiB.' }),
});
export type CreateDictionaryBody = Static<typeof createDictionaryBody>;

export const patchDictionaryBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    remove_rules: Type.Optional(
      Type.Array(grapheme, {
        maxItems: maxRules,
        description: 'Graphemes whose rules are removed (each must match a rule); applied before add_rules.',
      }),
    ),
    add_rules: Type.Optional(
      Type.Array(pronunciationRuleSchema, { maxItems: maxRules, description: 'Rules appended after the existing ones.' }),
    ),
  },
  { additionalProperties: false },
);
export type PatchDictionaryFields = Static<typeof patchDictionaryBody>;

export const dictionaryIdsField = Type.Array(Type.String({ minLength: 1, maxLength: maxIdLength }), {
  maxItems: maxDictionariesPerRequest,
  description: `Pronunciation dictionaries (POST /v1/pronunciation-dictionaries) whose rules apply, in this order (at most ${maxDictionariesPerRequest}).`,
});

/** The same answer for a dictionary that does not exist and for another key's: ids reveal nothing. */
const notFound = (id: string, param: string): VoxError =>
  new VoxError('not_found', `No pronunciation dictionary '${id}'. List them with GET /v1/pronunciation-dictionaries.`, { param });

const rulesOf = (record: PronunciationDictionaryRecord): PronunciationRule[] => record.rules as unknown as PronunciationRule[];

export class PronunciationDictionaryService {
  constructor(private readonly store: Store) {}

  toBody(record: PronunciationDictionaryRecord) {
    return { id: record.id, name: record.name, rules: rulesOf(record), created_at: record.createdAt };
  }

  async create(fields: CreateDictionaryBody, context: OperationContext): Promise<OperationResult> {
    const name = fields.name.trim();
    if (name.length === 0) throw new VoxError('invalid_request', "'name' must not be empty.", { param: 'name' });
    const [upload, ...more] = context.inputs.get('file') ?? [];
    if (!upload || more.length > 0)
      throw new VoxError('invalid_request', "'file' is required: one PLS lexicon as a multipart file.", { param: 'file' });
    if (upload.bytes > maxLexiconBytes)
      throw new VoxError(
        'payload_too_large',
        `A PLS lexicon has at most ${maxLexiconBytes} bytes; '${upload.filename}' has ${upload.bytes}.`,
        {
          param: 'file',
        },
      );
    const rules = parsePls(await readFile(upload.path, 'utf8'), 'file');
    const record: PronunciationDictionaryRecord = {
      id: `pdict_${randomUUID().replaceAll('-', '').slice(0, 20)}`,
      ownerKeyId: context.apiKey.id,
      name,
      rules: rules as unknown as Array<Record<string, unknown>>,
      createdAt: new Date().toISOString(),
    };
    await this.store.pronunciationDictionaries.insert(record);
    return { kind: 'json', status: 201, body: this.toBody(record) };
  }

  /** The caller's dictionaries (every one for an admin key), without their rules. */
  async list(caller: ApiKeyRecord): Promise<OperationResult> {
    const records = (await this.store.pronunciationDictionaries.list()).filter((r) => mayAccess(caller, r.ownerKeyId));
    return {
      kind: 'json',
      body: {
        pronunciation_dictionaries: records.map((r) => ({ id: r.id, name: r.name, rule_count: r.rules.length, created_at: r.createdAt })),
      },
    };
  }

  async get(id: string, caller: ApiKeyRecord): Promise<OperationResult> {
    return { kind: 'json', body: this.toBody(await this.record(id, caller)) };
  }

  async update(id: string, changes: PatchDictionaryFields, caller: ApiKeyRecord): Promise<OperationResult> {
    const current = await this.record(id, caller);
    if (changes.name !== undefined && changes.name.trim() === '')
      throw new VoxError('invalid_request', "'name' must not be empty.", { param: 'name' });
    let rules = rulesOf(current);
    for (const written of changes.remove_rules ?? []) {
      if (!rules.some((rule) => rule.graphemes.includes(written)))
        throw new VoxError('unsupported_value', `No rule of dictionary '${id}' has the grapheme '${written}'.`, { param: 'remove_rules' });
      rules = rules.filter((rule) => !rule.graphemes.includes(written));
    }
    rules = [...rules, ...(changes.add_rules ?? [])];
    if (rules.length > maxRules)
      throw new VoxError('invalid_request', `A dictionary holds at most ${maxRules} rules; this change makes ${rules.length}.`, {
        param: 'add_rules',
      });
    const updated = await this.store.pronunciationDictionaries.update(id, {
      ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
      rules: rules as unknown as Array<Record<string, unknown>>,
    });
    // Deleted since the lookup above.
    if (!updated) throw notFound(id, 'dictionary_id');
    return { kind: 'json', body: this.toBody(updated) };
  }

  async delete(id: string, caller: ApiKeyRecord): Promise<OperationResult> {
    await this.record(id, caller);
    await this.store.pronunciationDictionaries.delete(id);
    return { kind: 'json', body: { id, deleted: true } };
  }

  /**
   * The rules of the dictionaries a speech request names, in its order: each must be the caller's (or the caller an
   * admin key), else 404 as for any lookup; at most maxDictionariesPerRequest, each named once (400).
   */
  async rules(ids: readonly string[], caller: ApiKeyRecord, param = 'pronunciation_dictionary_ids'): Promise<PronunciationRule[]> {
    if (ids.length > maxDictionariesPerRequest)
      throw new VoxError('invalid_request', `At most ${maxDictionariesPerRequest} pronunciation dictionaries apply to a request.`, {
        param,
      });
    const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
    if (repeated) throw new VoxError('invalid_request', `Pronunciation dictionary '${repeated}' is named twice.`, { param });
    const rules: PronunciationRule[] = [];
    for (const id of ids) rules.push(...rulesOf(await this.record(id, caller, param)));
    return rules;
  }

  private async record(id: string, caller: ApiKeyRecord, param = 'dictionary_id'): Promise<PronunciationDictionaryRecord> {
    const record = await this.store.pronunciationDictionaries.get(id);
    if (!record || !mayAccess(caller, record.ownerKeyId)) throw notFound(id, param);
    return record;
  }
}
