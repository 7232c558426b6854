// Tasks: cursor pages, one task, employees, clients, bulk reassignment (docs/rules.md#bulk-reassignment).
import { ApiError } from '../../errors.ts';
import { BULK_MAX_TASKS } from '../../limits.ts';
import { etagOf } from '../../tasks/task-etag.ts';
import {
  decodeCursor,
  encodeCursor,
  searchOf,
  type TaskListQuery,
  taskSearchQuerySchema,
} from '../../tasks/task-search.ts';
import type { BulkOutcome } from '../../tasks/tasks.ts';
import { storingAnswer } from '../plugins/idempotency.ts';
import { byIdParams, errorResponses, idSchema, listAnswer, ref } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

type ListQuery = TaskListQuery & { limit: number };

export const taskRoutes: RoutesPlugin = async (app, { services }) => {
  const { tasks } = services;

  app.get<{ Querystring: ListQuery }>('/api/employee/tasks', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'List tasks, filtered, searched and sorted, one page at a time',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...taskSearchQuerySchema,
          limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['tasks', 'nextCursor'],
          properties: {
            tasks: { type: 'array', items: ref('Task') },
            nextCursor: { type: ['string', 'null'] },
          },
        },
      },
    },
    handler: async (request) => {
      const { cursor, limit, ...query } = request.query;
      const search = searchOf(query);
      const after = cursor === undefined ? undefined : decodeCursor(search, cursor);
      // One more than a page: it only says that another page exists.
      const found = await tasks.search(search, after, limit + 1);
      const page = found.slice(0, limit);
      const last = page[page.length - 1];
      const nextCursor = found.length > limit && last ? encodeCursor(search, last.position) : null;
      return { tasks: page.map(({ task }) => task), nextCursor };
    },
  });

  app.get<{ Params: { id: number } }>('/api/employee/tasks/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'One task',
      params: byIdParams,
      response: {
        200: {
          type: 'object',
          required: ['task'],
          properties: { task: ref('Task') },
          headers: {
            ETag: {
              type: 'string',
              description: "The task's version as a strong tag: send it as If-Match to edit it.",
              required: true,
            },
          },
        },
        ...errorResponses('NOT_FOUND'),
      },
    },
    handler: async (request, reply) => {
      const task = await tasks.find(request.params.id);
      if (!task) throw new ApiError('NOT_FOUND', {}, `Task ${request.params.id} does not exist.`);
      return reply.header('etag', etagOf(task.version)).send({ task });
    },
  });

  app.get('/api/employee/employees', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'Employees tasks can be reassigned to',
      response: {
        200: listAnswer('employees', ref('Colleague')),
      },
    },
    handler: async () => ({ employees: await tasks.assignees() }),
  });

  app.get('/api/employee/clients', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'Every client tasks belong to, sorted by name',
      response: {
        200: listAnswer('clients', ref('Client')),
      },
    },
    handler: async () => ({ clients: await tasks.clients() }),
  });

  app.patch<{ Body: { taskIds: number[]; assigneeId: number } }>('/api/employee/tasks/bulk', {
    config: {
      access: 'user',
      // An Idempotency-Key makes a retry safe: applied once, its first repeats free (plugins/idempotency.ts).
      idempotencyKey: true,
      mapValidationError: (error) =>
        error.validation?.some((v) => v.instancePath === '/taskIds' && v.keyword === 'maxItems')
          ? new ApiError('TASK_BULK_TOO_LARGE', { max: BULK_MAX_TASKS })
          : null,
    },
    schema: {
      tags: ['tasks'],
      summary: `Reassign 1–${BULK_MAX_TASKS} tasks at once, atomically; results in request order`,
      body: {
        type: 'object',
        required: ['taskIds', 'assigneeId'],
        additionalProperties: false,
        properties: {
          taskIds: { type: 'array', minItems: 1, maxItems: BULK_MAX_TASKS, items: idSchema },
          assigneeId: idSchema,
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['succeeded', 'failed', 'results'],
          properties: {
            succeeded: { type: 'integer' },
            failed: { type: 'integer' },
            results: {
              type: 'array',
              items: {
                type: 'object',
                required: ['taskId', 'status'],
                properties: {
                  taskId: { type: 'integer' },
                  status: { type: 'string', enum: ['reassigned', 'failed'] },
                  reason: { type: 'string', enum: ['NOT_FOUND', 'DUPLICATE'] },
                },
              },
            },
          },
        },
        ...errorResponses('TASK_BULK_TOO_LARGE', 'ASSIGNEE_NOT_FOUND'),
      },
    },
    handler: async (request) => {
      const { taskIds, assigneeId } = request.body;
      // With a key, its answer is stored in the reassignment's own transaction.
      const outcome = await tasks.bulkReassign(
        taskIds,
        assigneeId,
        request.user!.id,
        storingAnswer(request, bulkAnswer),
      );
      if (outcome.kind === 'assignee-not-found') throw new ApiError('ASSIGNEE_NOT_FOUND');
      return bulkAnswer(outcome);
    },
  });
};

/** The 200 body of a bulk reassignment: counts, and one result per requested id in order. */
function bulkAnswer(outcome: Extract<BulkOutcome, { kind: 'done' }>) {
  const results = outcome.results.map(({ taskId, outcome }) =>
    outcome === 'reassigned'
      ? { taskId, status: 'reassigned' }
      : { taskId, status: 'failed', reason: outcome },
  );
  const succeeded = results.filter((r) => r.status === 'reassigned').length;
  return { succeeded, failed: results.length - succeeded, results };
}
