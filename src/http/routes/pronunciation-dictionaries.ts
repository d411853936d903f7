/**
 * Pronunciation dictionaries: scope `tts` to write, any key to read. A dictionary changes nothing but the speech of the key
 * that made it (it is that key's alone, 404 to others, like a cloned voice), so it needs the scope speech does, not
 * `voices`, which guards cloning a person's voice. The scope is checked first: a key without `tts` gets 403 on writes
 * whatever the id.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import {
  createDictionaryBody,
  patchDictionaryBody,
  pronunciationRuleSchema,
  type CreateDictionaryBody,
  type PatchDictionaryFields,
  type PronunciationDictionaryService,
} from '../../lexicons/service.js';
import { maxIdLength } from '../../core/contract-fields.js';
import { requestContext, sendResult } from '../context.js';
import { errorResponses, keyedErrors } from '../schemas/common.js';

const security = [{ bearerAuth: [] }];
const tags = ['pronunciation dictionaries'];
const params = Type.Object({ dictionary_id: Type.String({ maxLength: maxIdLength }) });
type Params = { dictionary_id: string };
const dictionary = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    rules: Type.Array(pronunciationRuleSchema),
    created_at: Type.String({ format: 'date-time' }),
  },
  { description: 'A pronunciation dictionary and its rules, in the order they apply' },
);
const listed = Type.Object(
  {
    pronunciation_dictionaries: Type.Array(
      Type.Object({ id: Type.String(), name: Type.String(), rule_count: Type.Integer(), created_at: Type.String({ format: 'date-time' }) }),
    ),
  },
  { description: "The caller's dictionaries (every one for an admin key)" },
);
const deleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { description: 'The dictionary is gone' });

export const pronunciationDictionaryRoutes: FastifyPluginAsync<{ dictionaries: PronunciationDictionaryService }> = async (
  app,
  { dictionaries },
) => {
  app.post<{ Body: CreateDictionaryBody }>(
    '/v1/pronunciation-dictionaries',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'Create a pronunciation dictionary from a W3C PLS lexicon',
        description:
          'Each lexeme becomes a rule: its graphemes (matched case-sensitively as whole words) said as its alias or its phonemes ' +
          '(alphabet ipa or x-sampa), in its xml:lang. A malformed lexicon is a 400 naming the line.',
        tags,
        security,
        consumes: ['multipart/form-data'],
        body: createDictionaryBody,
        response: { 201: { ...dictionary, description: 'The new dictionary' }, ...errorResponses([...keyedErrors, 403, 413, 415]) },
      },
    },
    async (request, reply) => sendResult(reply, await dictionaries.create(request.body, requestContext(request))),
  );

  app.get(
    '/v1/pronunciation-dictionaries',
    {
      config: { scope: 'any' },
      schema: { summary: 'Pronunciation dictionaries', tags, security, response: { 200: listed, ...errorResponses([...keyedErrors]) } },
    },
    async (request, reply) => sendResult(reply, await dictionaries.list(requestContext(request).apiKey)),
  );

  app.get<{ Params: Params }>(
    '/v1/pronunciation-dictionaries/:dictionary_id',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'One pronunciation dictionary with its rules',
        tags,
        security,
        params,
        response: { 200: dictionary, ...errorResponses([...keyedErrors, 404]) },
      },
    },
    async (request, reply) => sendResult(reply, await dictionaries.get(request.params.dictionary_id, requestContext(request).apiKey)),
  );

  app.patch<{ Params: Params; Body: PatchDictionaryFields }>(
    '/v1/pronunciation-dictionaries/:dictionary_id',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'Rename a pronunciation dictionary, remove rules (by grapheme) and add rules',
        tags,
        security,
        params,
        body: patchDictionaryBody,
        response: { 200: dictionary, ...errorResponses([...keyedErrors, 403, 404, 413, 415, 422]) },
      },
    },
    async (request, reply) =>
      sendResult(reply, await dictionaries.update(request.params.dictionary_id, request.body, requestContext(request).apiKey)),
  );

  app.delete<{ Params: Params }>(
    '/v1/pronunciation-dictionaries/:dictionary_id',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'Delete a pronunciation dictionary',
        tags,
        security,
        params,
        response: { 200: deleted, ...errorResponses([...keyedErrors, 403, 404]) },
      },
    },
    async (request, reply) => sendResult(reply, await dictionaries.delete(request.params.dictionary_id, requestContext(request).apiKey)),
  );
};
