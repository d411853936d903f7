/** Download of result files. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { FileService } from '../../files/service.js';
import { contentTypes } from '../../audio/encode.js';
import { requestContext, sendResult } from '../context.js';
import { maxIdLength } from '../../core/contract-fields.js';
import { binaryContent, errorResponses, keyedErrors } from '../schemas/common.js';

export const fileRoutes: FastifyPluginAsync<{ files: FileService }> = async (app, { files }) => {
  app.get<{ Params: { file_id: string } }>(
    '/v1/audio/files/:file_id',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'Download a result file (until it expires)',
        tags: ['audio'],
        security: [{ bearerAuth: [] }],
        params: Type.Object({ file_id: Type.String({ maxLength: maxIdLength }) }),
        response: {
          200: { description: 'The file, in the format it was made in', content: binaryContent(Object.values(contentTypes)) },
          ...errorResponses([...keyedErrors, 404]),
        },
      },
    },
    async (request, reply) => sendResult(reply, await files.download(request.params.file_id, requestContext(request).apiKey)),
  );
};
