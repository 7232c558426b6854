// Tasks: list with filters and cursor paging, one task, employees, clients, and bulk reassignment (docs/rules.md#bulk-reassignment).
import { TASK_STATUSES, type TaskStatus } from '../../domain.ts';
import { ApiError } from '../../errors.ts';
import { BULK_MAX_TASKS } from '../../limits.ts';
import type { BulkOutcome } from '../../tasks/tasks.ts';
import { keysetCursor } from '../cursor.ts';
import { storingAnswer } from '../plugins/idempotency.ts';
import { byIdParams, errorResponses, idSchema, ref } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

interface ListQuery {
  assigneeId?: number;
  clientId?: number;
  status?: TaskStatus;
  limit: number;
  cursor?: string;
}

/** Cursors are opaque to clients: the last id of the page, encoded. */
const cursors = keysetCursor('after', [idSchema.maximum]);

export const taskRoutes: RoutesPlugin = async (app, { services }) => {
  const { tasks } = services;

  app.get<{ Querystring: ListQuery }>('/api/employee/tasks', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'List tasks, oldest id first, filtered, one page at a time',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          assigneeId: idSchema,
          clientId: idSchema,
          status: { type: 'string', enum: TASK_STATUSES },
          limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
          cursor: { type: 'string', maxLength: 64 },
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
      const { cursor, limit, ...filters } = request.query;
      const page = await tasks.list({
        ...filters,
        afterId: cursor ? cursors.decode(cursor)[0] : undefined,
        limit: limit + 1,
      });
      const { rows, nextCursor } = cursors.page(page, limit, (task) => [task.id]);
      return { tasks: rows, nextCursor };
    },
  });

  app.get<{ Params: { id: number } }>('/api/employee/tasks/:id', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'One task',
      params: byIdParams,
      response: {
        200: { type: 'object', required: ['task'], properties: { task: ref('Task') } },
        ...errorResponses('NOT_FOUND'),
      },
    },
    handler: async (request) => {
      const task = await tasks.find(request.params.id);
      if (!task) throw new ApiError('NOT_FOUND', {}, `Task ${request.params.id} does not exist.`);
      return { task };
    },
  });

  app.get('/api/employee/employees', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'Employees tasks can be reassigned to',
      response: {
        200: {
          type: 'object',
          required: ['employees'],
          properties: { employees: { type: 'array', items: ref('Colleague') } },
        },
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
        200: {
          type: 'object',
          required: ['clients'],
          properties: { clients: { type: 'array', items: ref('Client') } },
        },
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
      const outcome = await tasks.bulkReassign(taskIds, assigneeId, storingAnswer(request, bulkAnswer));
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
