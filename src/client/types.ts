// The API's data shapes as a client sees them (docs/rules.md#endpoints): plain JSON. The names and
// limits it shares with the server come from the server's own modules that import nothing (a lint
// rule and test/unit/layers.test.ts keep it so); test/unit/client-contract.test.ts checks the shapes.
import type { HistorySource, Role, TaskPriority, TaskSort, TaskStatus } from '../domain.ts';
import type { ControlName } from '../rate-limit/control-names.ts';
import type { SecurityEventType } from '../security-event.ts';

export {
  PASSWORD_REFUSALS as PASSWORD_REFUSAL_REASONS,
  type PasswordRefusal as PasswordRefusalReason,
} from '../auth/password-refusals.ts';
export {
  HISTORY_SOURCES,
  type HistorySource,
  type Role,
  TASK_PRIORITIES,
  TASK_STATUSES,
  type TaskPriority,
  type TaskSort,
  type TaskStatus,
  WRITABLE_FIELDS,
} from '../domain.ts';
export {
  BULK_MAX_TASKS,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  PASSKEY_NAME_MAX,
  PASSKEYS_MAX,
} from '../limits.ts';
export { CONTROL_NAMES, type ControlName } from '../rate-limit/control-names.ts';
export { SECURITY_EVENT_TYPES, type SecurityEventType } from '../security-event.ts';

export interface User {
  readonly id: number;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  /** True while the account signs in with a temporary password: every route but me, the password change, logout and the CSRF token answers 403 PASSWORD_CHANGE_REQUIRED. */
  readonly mustChangePassword: boolean;
}

/** A colleague as a reassignment target (GET /api/employee/employees): nothing about their password. */
export type Colleague = Omit<User, 'mustChangePassword'>;

export interface Task {
  readonly id: number;
  readonly clientId: number;
  readonly title: string;
  /** Plain text: show it as text, never as HTML. */
  readonly description: string;
  readonly status: TaskStatus;
  readonly priority: TaskPriority;
  /** A calendar date, YYYY-MM-DD, or null. */
  readonly dueDate: string | null;
  readonly assigneeId: number | null;
  /** ISO-8601, UTC. */
  readonly createdAt: string;
  /** Null for tasks that existed before tasks could be created. */
  readonly createdBy: number | null;
  /** ISO-8601, UTC. */
  readonly updatedAt: string;
  /** Grows by one with every change; the ETag changes exactly with it. */
  readonly version: number;
}

/** What a create or an edit may set (a create needs clientId and title). */
export interface TaskFields {
  readonly clientId?: number;
  readonly title?: string;
  readonly description?: string;
  readonly status?: TaskStatus;
  readonly priority?: TaskPriority;
  readonly dueDate?: string | null;
  readonly assigneeId?: number | null;
}

export type NewTask = TaskFields & { readonly clientId: number; readonly title: string };

/** A task and the ETag of its version, to send as If-Match when editing it. */
export interface TaskWithEtag {
  readonly task: Task;
  readonly etag: string;
}

/** One change of a task: when, by whom, from where, each field's value before and after. */
export interface HistoryEntry {
  readonly id: number;
  /** ISO-8601, UTC. */
  readonly at: string;
  readonly actor: { readonly id: number; readonly name: string } | null;
  readonly source: HistorySource;
  readonly changes: readonly { readonly field: string; readonly from: unknown; readonly to: unknown }[];
}

export interface HistoryPage {
  readonly entries: readonly HistoryEntry[];
  /** Null on the last page. */
  readonly nextCursor: string | null;
}

/** A client (the company a task belongs to), as GET /api/employee/clients lists it. */
export interface Client {
  readonly id: number;
  readonly name: string;
}

/** What the list and the export look for (docs/rules.md#finding-tasks). */
export interface TaskQuery {
  /** Words that must each start a word of the title or the description, ignoring case. */
  readonly q?: string;
  /** An employee's id, or 'none' for tasks nobody is assigned. */
  readonly assigneeId?: number | 'none';
  readonly clientId?: number;
  /** One status or several. */
  readonly status?: TaskStatus | readonly TaskStatus[];
  /** One priority or several. */
  readonly priority?: TaskPriority | readonly TaskPriority[];
  /** YYYY-MM-DD: tasks due on or before that day. */
  readonly dueBefore?: string;
  readonly sort?: TaskSort;
}

export interface TaskFilters extends TaskQuery {
  /** 1–200; the server's default is 50. */
  readonly limit?: number;
  /** The `nextCursor` of the previous page, with the same filters and sort. */
  readonly cursor?: string;
}

/** An export: the CSV text and the file name the server suggests. */
export interface TaskExport {
  readonly csv: string;
  readonly filename: string;
}

/** One wrong cell of an import (the `errors` of a 422 IMPORT_INVALID's body). */
export interface ImportRowError {
  /** The row as a spreadsheet numbers it: the header is 1. */
  readonly line: number;
  /** The column's header name. */
  readonly column: string;
  readonly code: 'REQUIRED' | 'INVALID' | 'CLIENT_NOT_FOUND' | 'ASSIGNEE_NOT_FOUND' | 'EXTRA_CELLS';
  readonly message: string;
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

/** One entry of GET /api/rate-limits. */
export interface ControlReport {
  readonly control: ControlName;
  readonly code: string;
  /** `shadow`: the control counts and reports but never refuses (RATE_LIMIT_SHADOW). */
  readonly mode: 'enforce' | 'shadow';
  readonly limit: number;
  readonly windowSeconds: number;
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** One entry of GET /api/admin/login-locks: an account or an address a login control refuses now. */
export interface LoginLock {
  readonly control: string;
  /** Set for controls keyed by account. */
  readonly email?: string;
  /** Set for controls keyed by address. */
  readonly address?: string;
  /** Set for `login-device`: the id of the known device that is locked. */
  readonly device?: string;
  readonly failures: number;
  /** Seconds until the lock frees an attempt. */
  readonly retryAfter: number;
}

/** One entry of GET /api/admin/security-events. */
export interface SecurityEvent {
  readonly id: number;
  /** ISO-8601, UTC. */
  readonly at: string;
  readonly type: SecurityEventType;
  readonly control: string;
  readonly email: string | null;
  readonly address: string | null;
  /** The server instance that saw it. */
  readonly instance: string;
  /** The admin who acted (admin resets). */
  readonly actorId: number | null;
  /**
   * A summary only (absent on an event stored as its own row): the repeats of this kind about one
   * account past what a ten-minute window keeps, counted in one row, `at` being the first's.
   */
  readonly count?: number;
  /** A summary only: the time of its latest event. */
  readonly lastAt?: string;
  /** A summary only: the first few distinct addresses its events came from. */
  readonly addresses?: readonly string[];
  /** A summary only: some of its events came from addresses beyond `addresses`. */
  readonly moreAddresses?: boolean;
}

export interface SecurityEventQuery {
  /** 1–200; the server's default is 50. */
  readonly limit?: number;
  /** The `nextCursor` of the previous page. */
  readonly cursor?: string;
}

export interface SecurityEventPage {
  /** Newest first. */
  readonly events: readonly SecurityEvent[];
  /** Null on the last page. */
  readonly nextCursor: string | null;
}

/** GET /api/admin/login-pressure: whether the answering server sheds sign-in attempts (docs/rules.md#the-login-gate). */
export interface LoginPressure {
  /** True from the first attempt turned away until a minute passes without one. */
  readonly underPressure: boolean;
  /** When the current episode started (ISO-8601), or null. */
  readonly since: string | null;
  /** The last attempt turned away (ISO-8601), or null. */
  readonly lastShedAt: string | null;
  /** Attempts turned away in the current episode. */
  readonly shedAttempts: number;
  /** The server instance that answered: each guards its own CPUs. */
  readonly instance: string;
  readonly gate: {
    readonly concurrency: number;
    readonly running: number;
    readonly queued: { readonly known: number; readonly shared: number };
    /** The measured duration of one password check, in milliseconds. */
    readonly checkMs: number;
    /** LOGIN_QUEUE_MAX_WAIT in milliseconds. */
    readonly maxWaitMs: number;
  };
}

/** One of the signed-in user's passkeys (docs/rules.md#passkeys): never its key or counter. */
export interface Passkey {
  readonly id: number;
  /** 1–64 characters, chosen by the user. */
  readonly name: string;
  /** ISO-8601, UTC. */
  readonly createdAt: string;
  /** The last sign-in with it (ISO-8601), or null. */
  readonly lastUsedAt: string | null;
}

/**
 * WebAuthn options and answers travel as the JSON forms of the WebAuthn Level 3 spec
 * (PublicKeyCredentialCreationOptionsJSON and the rest): the client passes them between the
 * server and the browser's API (or @simplewebauthn/browser) without reading them.
 */
export type WebAuthnJSON = Readonly<Record<string, unknown>>;

/** One of the signed-in user's sessions (GET /api/auth/sessions). */
export interface Session {
  /** Its public id: not its cookie, and nothing a cookie can be made from. */
  readonly id: string;
  /** True for the session of the call that listed it. */
  readonly current: boolean;
  /** ISO-8601, UTC. */
  readonly createdAt: string;
  /** Its last use; up to a minute behind. */
  readonly lastSeenAt: string;
  readonly userAgent: string | null;
}

/** One of the signed-in user's known devices (GET /api/auth/devices): a browser they signed in from. */
export interface Device {
  readonly id: number;
  /** The first sign-in from it (ISO-8601, UTC). */
  readonly createdAt: string;
  /** The last sign-in from it. */
  readonly lastUsedAt: string;
  readonly userAgent: string | null;
}

/** An account as an admin sees it (GET /api/admin/users). */
export interface AdminUser extends User {
  readonly disabled: boolean;
  /** ISO-8601, UTC. */
  readonly createdAt: string;
  /** The last sign-in, or null for never. */
  readonly lastSignInAt: string | null;
}

/** What an admin may change of an account (PATCH /api/admin/users/:id): any of these. */
export interface AccountEdit {
  readonly name?: string;
  readonly role?: Role;
  readonly disabled?: boolean;
}

/** A new account and its temporary password, shown this once. */
export interface CreatedUser {
  readonly user: AdminUser;
  readonly temporaryPassword: string;
}
