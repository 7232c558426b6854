// The API's data shapes as a client sees them (contract §2, §4, §6): plain JSON, no server imports
// (a lint rule enforces it; test/unit/client-contract.test.ts fails when these copies drift).

export type Role = 'employee' | 'admin';
export type TaskStatus = 'open' | 'in_progress' | 'done';

export interface User {
  readonly id: number;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
}

export interface Task {
  readonly id: number;
  readonly clientId: number;
  readonly title: string;
  readonly status: TaskStatus;
  readonly assigneeId: number | null;
  /** ISO-8601, UTC. */
  readonly updatedAt: string;
}

export interface TaskFilters {
  readonly assigneeId?: number;
  readonly clientId?: number;
  readonly status?: TaskStatus;
  /** 1–200; the server's default is 50. */
  readonly limit?: number;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
}

export interface TaskPage {
  readonly tasks: readonly Task[];
  /** Null on the last page. */
  readonly nextCursor: string | null;
}

export type BulkTaskResult =
  | { readonly taskId: number; readonly status: 'reassigned' }
  | { readonly taskId: number; readonly status: 'failed'; readonly reason: 'NOT_FOUND' | 'DUPLICATE' };

export interface BulkReassignResult {
  readonly succeeded: number;
  readonly failed: number;
  /** One entry per requested id, in request order. */
  readonly results: readonly BulkTaskResult[];
}

/**
 * The policy names the server uses in its headers and in GET /api/rate-limits. A copy of the
 * server's policy table, checked by test/unit/client-contract.test.ts.
 */
export const CONTROL_NAMES = [
  'task-bulk',
  'api-authenticated',
  'api-unauthenticated',
  'login-account',
  'login-ip',
] as const;

export type ControlName = (typeof CONTROL_NAMES)[number];

/** One entry of GET /api/rate-limits. */
export interface ControlReport {
  readonly control: ControlName;
  readonly code: string;
  readonly limit: number;
  readonly windowSeconds: number;
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** The largest number of tasks one bulk request may name (the server's schema says the same). */
export const BULK_MAX_TASKS = 50;
