// JSON schemas shared by routes: they validate, serialise, and become the OpenAPI document.
import { TASK_STATUSES } from '../db/repositories/tasks.ts';

export const userSchema = {
  $id: 'User',
  type: 'object',
  required: ['id', 'email', 'name', 'role'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ['employee', 'admin'] },
  },
} as const;

export const taskSchema = {
  $id: 'Task',
  type: 'object',
  required: ['id', 'clientId', 'title', 'status', 'assigneeId', 'updatedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    clientId: { type: 'integer' },
    title: { type: 'string' },
    status: { type: 'string', enum: TASK_STATUSES },
    assigneeId: { type: ['integer', 'null'] },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const errorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['code', 'message'],
  additionalProperties: true,
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    retryAfter: {
      type: 'integer',
      description: 'Seconds to wait (429, and 503 LOGIN_BUSY or DATABASE_UNAVAILABLE)',
    },
  },
} as const;

export const SHARED_SCHEMAS = [userSchema, taskSchema, errorSchema];

export const ref = (id: 'User' | 'Task' | 'Error') => ({ $ref: `${id}#` }) as const;

/** Positive database ids (PostgreSQL `integer`). */
export const idSchema = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

/**
 * The error responses a route can give, by status, all shaped `{code, message, ...}`. Every route
 * may answer 503: each resolves a session cookie in the database (DATABASE_UNAVAILABLE, §13).
 */
export function errorResponses(...statuses: number[]): Record<number, ReturnType<typeof ref>> {
  return Object.fromEntries([...new Set([...statuses, 503])].map((status) => [status, ref('Error')]));
}
