// JSON schemas shared by routes: they validate, serialise, and become the OpenAPI document.

import { ROLES, TASK_PRIORITIES, TASK_STATUSES, WRITABLE_FIELDS } from '../domain.ts';
import { ERRORS, type ErrorCode } from '../errors.ts';

/** What every schema of a person shows: who they are and their role. */
const personProperties = {
  id: { type: 'integer' },
  email: { type: 'string' },
  name: { type: 'string' },
  role: { type: 'string', enum: ROLES },
} as const;

export const userSchema = {
  $id: 'User',
  type: 'object',
  required: ['id', 'email', 'name', 'role', 'mustChangePassword'],
  additionalProperties: false,
  properties: {
    ...personProperties,
    mustChangePassword: {
      type: 'boolean',
      description:
        'True while the account signs in with a temporary password: until it is changed (POST /api/auth/password), ' +
        'every route but GET /api/auth/me, POST /api/auth/password, POST /api/auth/logout and GET /api/csrf-token answers 403 PASSWORD_CHANGE_REQUIRED.',
    },
  },
} as const;

/** A colleague as a reassignment target: nothing about their password (who was just reset is what a phisher wants). */
export const colleagueSchema = {
  $id: 'Colleague',
  type: 'object',
  required: ['id', 'email', 'name', 'role'],
  additionalProperties: false,
  properties: personProperties,
} as const;

export const taskSchema = {
  $id: 'Task',
  type: 'object',
  required: ['id', ...WRITABLE_FIELDS, 'createdAt', 'createdBy', 'updatedAt', 'version'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    clientId: { type: 'integer' },
    title: { type: 'string' },
    description: { type: 'string', description: 'Plain text: show it as text, never as HTML.' },
    status: { type: 'string', enum: TASK_STATUSES },
    priority: { type: 'string', enum: TASK_PRIORITIES },
    dueDate: { type: ['string', 'null'], format: 'date' },
    assigneeId: { type: ['integer', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    createdBy: {
      type: ['integer', 'null'],
      description: 'Null for tasks that existed before tasks could be created.',
    },
    updatedAt: { type: 'string', format: 'date-time' },
    version: {
      type: 'integer',
      minimum: 1,
      description: 'Grows by one with every change of the task; the ETag changes exactly with it.',
    },
  },
} as const;

export const clientSchema = {
  $id: 'Client',
  type: 'object',
  required: ['id', 'name'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
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
    retryAfter: { type: 'integer', description: 'Seconds to wait (429 and 503)' },
  },
} as const;

/** An answer that is one named list, `{ "<name>": [item, …] }` (the employees, the clients, the locks, the controls). */
export function listAnswer<Name extends string>(name: Name, items: object) {
  return { type: 'object', required: [name], properties: { [name]: { type: 'array', items } } } as const;
}

export const SHARED_SCHEMAS = [userSchema, colleagueSchema, taskSchema, clientSchema, errorSchema];

export const ref = (id: 'User' | 'Colleague' | 'Task' | 'Client' | 'Error') => ({ $ref: `${id}#` }) as const;

/** Positive database ids (PostgreSQL `integer`). */
export const idSchema = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;

/** The params of a route that names one row by its id (`/…/:id`). */
export const byIdParams = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: idSchema },
} as const;

/**
 * The error responses a route gives of its own (a missing task, a wrong password), by code; a
 * bare status stands for every code of that status. The OpenAPI document adds what every route
 * of its kind answers (its rate limit, CSRF, access and validation: openapi-answers.ts).
 */
export function errorResponses(...answers: (ErrorCode | number)[]): Record<number, object> {
  const byStatus = new Map<number, ErrorCode[] | null>();
  for (const answer of answers) {
    if (typeof answer === 'number') byStatus.set(answer, null);
    else {
      const status = ERRORS[answer].status;
      const codes = byStatus.get(status);
      if (codes !== null) byStatus.set(status, [...(codes ?? []), answer]);
    }
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      status,
      codes === null
        ? ref('Error')
        : {
            type: 'object',
            required: ['code', 'message'],
            additionalProperties: true,
            properties: { ...errorSchema.properties, code: { type: 'string', enum: codes } },
          },
    ]),
  );
}
