// The portal's own words, beneath every layer: the roles an account has and the statuses a task goes through.

export type Role = 'employee' | 'admin';

export const ROLES: readonly Role[] = ['employee', 'admin'];

/** Every task status, in the order people read them; the schemas, the seed and the client follow this list. */
export const TASK_STATUSES = ['open', 'in_progress', 'done'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
