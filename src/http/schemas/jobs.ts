/** Jobs: the fields that turn an operation call into a job, the job object, and the jobs routes' parameters. */
import { Type, type Static } from '@sinclair/typebox';
import { jobStatuses, operations } from '../../core/records.js';
import { maxIdLength } from '../../core/contract-fields.js';
import { openObject } from './common.js';

/** Spread into every operation body: any of them may run as a job. */
export const jobFields = {
  async: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Answer 202 with a job at once; poll GET /v1/jobs/{id}, follow /events, or get a webhook.',
    }),
  ),
  webhook_url: Type.Optional(
    Type.String({
      maxLength: 2048,
      description: 'Implies async=true. Receives job.succeeded/failed/cancelled, signed per Standard Webhooks with the key’s secret.',
    }),
  ),
};

const progress = Type.Union([Type.Object({ stage: Type.String(), fraction: Type.Number() }), Type.Null()]);

export const jobObject = openObject(
  {
    id: Type.String(),
    object: Type.Literal('job'),
    operation: Type.String({ enum: [...operations] }),
    status: Type.String({ enum: [...jobStatuses] }),
    progress,
    created_at: Type.String({ format: 'date-time' }),
    started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    attempts: Type.Integer(),
    cancel_requested: Type.Boolean(),
    input: openObject({}, 'What was submitted: filename, bytes, duration_seconds'),
    result: Type.Unknown({
      description:
        'When succeeded: the JSON body the synchronous call returns; audio and archives as {object: file, id, url, content_type, bytes, ' +
        'expires_at, headers}; srt, vtt and text as {object: text, content_type, text}',
    }),
    error: Type.Unknown({ description: 'When failed or cancelled: the error envelope’s fields' }),
    webhook: Type.Unknown({ description: 'The webhook URL and every delivery attempt, or null' }),
    links: openObject({ self: Type.String(), events: Type.String(), cancel: Type.String() }, 'Where to follow the job'),
  },
  'A job',
);

export const acceptedJob = { description: 'Accepted as a job (async=true or webhook_url): follow it at the Location header', ...jobObject };

export const jobParams = Type.Object({ job_id: Type.String({ maxLength: maxIdLength }) });
export type JobParams = Static<typeof jobParams>;

export const listJobsQuery = Type.Object(
  {
    status: Type.Optional(Type.Unsafe<(typeof jobStatuses)[number]>({ type: 'string', enum: [...jobStatuses] })),
    operation: Type.Optional(Type.Unsafe<(typeof operations)[number]>({ type: 'string', enum: [...operations] })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'next_cursor of the previous page' })),
  },
  { additionalProperties: false },
);
export type ListJobsQuery = Static<typeof listJobsQuery>;

export const jobList = openObject(
  {
    object: Type.Literal('list'),
    data: Type.Array(jobObject),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  'Jobs, newest first',
);

export const webhookSecret = openObject(
  { secret: Type.String({ description: 'whsec_ + base64: verify deliveries with any Standard Webhooks library' }) },
  'The key’s webhook signing secret',
);
