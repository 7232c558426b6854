// Tasks a team runs (docs/rules.md#tasks): create, edit under If-Match, and a task's history.

import {
  DESCRIPTION_MAX_LENGTH,
  HISTORY_PAGE_SIZE,
  HISTORY_SOURCES,
  TASK_PRIORITIES,
  TASK_STATUSES,
  type Task,
  TITLE_MAX_LENGTH,
  type WritableFields,
} from '../../domain.ts';
import { ApiError } from '../../errors.ts';
import { etagOf, preconditionOf } from '../../tasks/task-etag.ts';
import type { NewTask } from '../../tasks/task-service.ts';
import { keysetCursor } from '../cursor.ts';
import { storingAnswer } from '../plugins/idempotency.ts';
import { byIdParams, errorResponses, idSchema, ref } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

/**
 * The writable fields as a body schema. A title's length is judged once trimmed (task-rules.ts);
 * the schema's bound only keeps a huge one out (room for spaces around it).
 */
const FIELDS = {
  clientId: idSchema,
  title: { type: 'string', minLength: 1, maxLength: TITLE_MAX_LENGTH * 4 },
  description: { type: 'string', maxLength: DESCRIPTION_MAX_LENGTH, description: 'Plain text, never HTML.' },
  status: { type: 'string', enum: TASK_STATUSES },
  priority: { type: 'string', enum: TASK_PRIORITIES },
  dueDate: {
    type: ['string', 'null'],
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    description: 'A calendar date that exists (YYYY-MM-DD), or null.',
  },
  assigneeId: { ...idSchema, type: ['integer', 'null'], description: 'An enabled employee, or null.' },
} as const;

const ETAG_HEADER = {
  ETag: {
    type: 'string',
    description: "The task's version as a strong tag: send it as If-Match to edit it.",
    required: true,
  },
} as const;

const taskAnswer = (description: string, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  required: ['task'],
  additionalProperties: false,
  description,
  properties: { task: ref('Task') },
  headers: { ...ETAG_HEADER, ...extra },
});

/** A history cursor: the id of the last entry of the page, encoded; opaque to clients. */
const cursors = keysetCursor('before', [idSchema.maximum]);

const location = (task: Task) => `/api/employee/tasks/${task.id}`;

export const taskEditRoutes: RoutesPlugin = async (app, { services }) => {
  const { taskService } = services;

  app.post<{ Body: NewTask }>('/api/employee/tasks', {
    config: {
      access: 'user',
      // A retried create makes one task; the replay is the first answer: 201 with its headers.
      idempotencyKey: {
        status: 201,
        headers: (body) => {
          const { task } = body as { task: Task };
          return { location: location(task), etag: etagOf(task.version) };
        },
      },
    },
    schema: {
      tags: ['tasks'],
      summary: 'Create a task',
      body: {
        type: 'object',
        required: ['clientId', 'title'],
        additionalProperties: false,
        properties: FIELDS,
      },
      response: {
        201: taskAnswer('Created.', {
          Location: { type: 'string', description: 'The path of the new task.', required: true },
        }),
        ...errorResponses('CLIENT_NOT_FOUND', 'ASSIGNEE_NOT_FOUND'),
      },
    },
    handler: async (request, reply) => {
      const answer = (task: Task) => ({ task });
      const task = await taskService.create(request.user!.id, request.body, storingAnswer(request, answer));
      return reply
        .code(201)
        .header('location', location(task))
        .header('etag', etagOf(task.version))
        .send({ task });
    },
  });

  app.patch<{ Params: { id: number }; Body: WritableFields; Headers: { 'if-match'?: string } }>(
    '/api/employee/tasks/:id',
    {
      config: { access: 'user' },
      schema: {
        tags: ['tasks'],
        summary: 'Edit a task under If-Match: only the fields sent change',
        params: byIdParams,
        headers: {
          type: 'object',
          properties: {
            'if-match': {
              type: 'string',
              maxLength: 1024,
              description:
                "The task's ETag as last seen (or * for any version). Missing: 428; not the current one: 412 with the task as it is.",
            },
          },
        },
        body: { type: 'object', additionalProperties: false, properties: FIELDS },
        response: {
          200: taskAnswer('The task as it is now (unchanged, same version, when nothing differed).'),
          ...errorResponses('NOT_FOUND', 'PRECONDITION_REQUIRED', 'CLIENT_NOT_FOUND', 'ASSIGNEE_NOT_FOUND'),
          412: {
            ...errorResponses('TASK_CHANGED')[412],
            headers: {
              ETag: {
                ...ETAG_HEADER.ETag,
                description: "The ETag of the task as it is now (the body's task).",
              },
            },
          },
        },
      },
      handler: async (request, reply) => {
        const precondition = preconditionOf(request.headers['if-match']);
        try {
          const task = await taskService.edit(
            request.user!.id,
            request.params.id,
            precondition,
            request.body,
          );
          return reply.header('etag', etagOf(task.version)).send({ task });
        } catch (error) {
          // A 412 names the version it carries, so the caller can apply its change over it in one step.
          if (error instanceof ApiError && error.code === 'TASK_CHANGED')
            reply.header('etag', etagOf((error.details.task as Task).version));
          throw error;
        }
      },
    },
  );

  app.get<{ Params: { id: number }; Querystring: { cursor?: string } }>('/api/employee/tasks/:id/history', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: `A task's history, newest first, ${HISTORY_PAGE_SIZE} entries a page`,
      params: byIdParams,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { cursor: { type: 'string', maxLength: 64 } },
      },
      response: {
        200: {
          type: 'object',
          required: ['entries', 'nextCursor'],
          additionalProperties: false,
          properties: {
            entries: { type: 'array', items: historyEntrySchema },
            nextCursor: { type: ['string', 'null'] },
          },
        },
        ...errorResponses('NOT_FOUND'),
      },
    },
    handler: async (request) => {
      const { cursor } = request.query;
      const beforeId = cursor ? cursors.decode(cursor)[0] : undefined;
      const entries = await taskService.history(request.params.id, beforeId, HISTORY_PAGE_SIZE + 1);
      if (!entries) throw new ApiError('NOT_FOUND', {}, `Task ${request.params.id} does not exist.`);
      const page = cursors.page(entries, HISTORY_PAGE_SIZE, (entry) => [entry.id]);
      return { entries: page.rows, nextCursor: page.nextCursor };
    },
  });
};

/** One change of a task: when, by whom, from where, and each field's value before and after. */
const historyEntrySchema = {
  type: 'object',
  required: ['id', 'at', 'actor', 'source', 'changes'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    at: { type: 'string', format: 'date-time' },
    actor: {
      type: ['object', 'null'],
      required: ['id', 'name'],
      additionalProperties: false,
      properties: { id: { type: 'integer' }, name: { type: 'string' } },
      description: 'Who made the change; null when no one signed in made it.',
    },
    source: { type: 'string', enum: HISTORY_SOURCES },
    changes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'from', 'to'],
        additionalProperties: false,
        properties: {
          field: { type: 'string' },
          // Any JSON value: a field's value as the Task shows it (text, a number, or null).
          from: { description: 'The value before the change (null for a field a create or import set).' },
          to: { description: 'The value after the change.' },
        },
      },
    },
  },
} as const;
