// The typed API client: fetch-based, for the portal page and for any TypeScript consumer (browser or Node).

import { ApiError } from './api-error.ts';
import type { CookieJar } from './cookie-jar.ts';
import { parseRateLimit, parseRetryAfter, type RateLimitState } from './rate-limit-headers.ts';
import type {
  AccountEdit,
  AdminUser,
  BulkReassignResult,
  Client,
  Colleague,
  ControlReport,
  CreatedUser,
  Device,
  HistoryPage,
  LoginLock,
  LoginPressure,
  NewTask,
  Passkey,
  Role,
  SecurityEventPage,
  SecurityEventQuery,
  Session,
  Task,
  TaskExport,
  TaskFields,
  TaskFilters,
  TaskPage,
  TaskQuery,
  TaskWithEtag,
  User,
  WebAuthnJSON,
} from './types.ts';
import { solveInSlices, WORK_BITS_MAX, type WorkAsked, type WorkSolver } from './work-solver.ts';

/** Waiting out a 429 or a 503 once, for idempotent (GET) calls only. */
export interface RetryPolicy {
  /** Longer waits than this are not worth blocking on: the 429 is thrown at once. Default 60. */
  readonly maxWaitSeconds: number;
}

export interface ApiClientOptions {
  /** The API's origin, such as `http://127.0.0.1:3000`; empty (the default) means the page's own origin. */
  readonly baseUrl?: string;
  readonly fetch?: typeof fetch;
  /** Keeps the session and CSRF cookies where fetch does not (Node); leave unset in browsers. */
  readonly cookieJar?: CookieJar;
  /**
   * Default for GET calls: `true` or a policy to wait `Retry-After` and retry once. Off by default
   * for a 429; on by default for a 503 with Retry-After (`false` turns both off). A keyed bulk
   * reassignment's own retries (`bulkReassign`) follow the policy's `maxWaitSeconds`, and `false`.
   */
  readonly retry?: boolean | RetryPolicy;
  /** Told every rate-limit state a response reports, successes and 429s alike. */
  readonly onRateLimit?: (state: RateLimitState) => void;
  /** How to wait before a retry; tests pass one that moves a fake clock instead. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly now?: () => number;
  /** How `login` solves a LOGIN_BUSY's challenge (docs/rules.md#proved-work); default: on this thread, in slices. */
  readonly solveWork?: WorkSolver;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** GET calls only: overrides the client's `retry` default for this call. */
  readonly retry?: boolean | RetryPolicy;
  /** Makes this call instead of the client's `fetch`: a page's XMLHttpRequest one, to show an upload's progress. */
  readonly fetch?: typeof fetch;
}

export interface LoginOptions extends CallOptions {
  /** Overrides the client's `solveWork` for this sign-in (the page passes its worker's). */
  readonly solveWork?: WorkSolver;
  /** Told before each challenge is solved, with the effort it is solved at. */
  readonly onWork?: (asked: WorkAsked) => void;
}

/** A sign-in answered LOGIN_BUSY with a challenge is solved and sent again at most this many times. */
export const LOGIN_WORK_ROUNDS = 3;

export interface BulkReassignOutcome extends BulkReassignResult {
  /** The bulk budget after this request (`task-bulk`), from the response headers. */
  readonly rateLimit: RateLimitState | null;
  /** The Idempotency-Key the reassignment was sent with (null: none). */
  readonly idempotencyKey: string | null;
  /**
   * True when the answer is the stored one of an earlier request with the same key
   * (`Idempotent-Replayed: true`): that request was applied, once, and this one changed nothing.
   */
  readonly replayed: boolean;
}

export interface BulkReassignOptions extends CallOptions {
  /**
   * The reassignment's Idempotency-Key: a new one for each reassignment, and the same one when the
   * caller sends that reassignment again (the server then applies it at most once). By default a
   * new key is made for the call; `null` sends none, and the call is then never retried.
   */
  readonly idempotencyKey?: string | null;
}

/**
 * A keyed bulk reassignment is sent again with its key at most this many times after a failure
 * that leaves its fate unknown or says to come back (no answer, 502, 503, 504, or 409 while an
 * earlier try with the key is still in flight).
 */
export const BULK_RETRIES = 2;

export interface ImportOutcome {
  readonly created: number;
  readonly idempotencyKey: string | null;
  readonly replayed: boolean;
}

export interface CreateTaskOutcome extends TaskWithEtag {
  readonly idempotencyKey: string | null;
  readonly replayed: boolean;
}

/** Statuses after which a keyed reassignment is sent again: a proxy without an answer, the service away. */
const RETRIED_STATUSES = new Set([502, 503, 504]);

/** The wait before such a retry when the answer does not say (no answer at all, a proxy's 502). */
const BULK_RETRY_DEFAULT_SECONDS = 1;

interface Request {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Record<string, string | number | readonly string[] | undefined>;
  readonly body?: unknown;
  /** A CSV body, sent as text/csv instead of JSON. */
  readonly csv?: string;
  /** What the answer is: JSON by default, or CSV read as text. */
  readonly accept?: 'text/csv';
  /** Headers of this call beside the client's own (the Idempotency-Key). */
  readonly headers?: Record<string, string>;
  readonly options?: CallOptions;
}

interface Answer<T> {
  readonly data: T;
  readonly rateLimit: RateLimitState | null;
  /** The answer carried `Idempotent-Replayed: true`. */
  readonly replayed: boolean;
  /** The answer's Content-Disposition (an export's file name), or null. */
  readonly disposition: string | null;
  /** The answer's ETag (a task's version), or null. */
  readonly etag: string | null;
}

const DEFAULT_RETRY: RetryPolicy = { maxWaitSeconds: 60 };

export class ApiClient {
  private token: string | null = null;
  private readonly latest = new Map<string, RateLimitState>();
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly now: () => number;

  private readonly options: ApiClientOptions;

  constructor(options: ApiClientOptions = {}) {
    this.options = options;
    this.baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
    // Wrapped, not stored bare: browsers refuse `fetch` called with another object as `this`.
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? sleep;
    this.now = options.now ?? Date.now;
  }

  /** The CSRF token unsafe calls send; null until `csrf()` or `login()`. */
  get csrfToken(): string | null {
    return this.token;
  }

  /** The last rate-limit state a response reported for `policy` (`task-bulk`, …), if any. */
  rateLimitState(policy: string): RateLimitState | null {
    return this.latest.get(policy) ?? null;
  }

  /** Fetches the CSRF token (and the cookie behind it) for the unsafe calls that follow. */
  async csrf(options?: CallOptions): Promise<string> {
    const { data } = await this.send<{ csrfToken: string }>({
      method: 'GET',
      path: '/api/csrf-token',
      options,
    });
    this.token = data.csrfToken;
    return this.token;
  }

  /**
   * Signs in; fetches a CSRF token first if there is none, and keeps the new one the login hands out.
   * A LOGIN_BUSY that carries a challenge (a server under a flood, docs/rules.md#proved-work) is solved and the
   * sign-in sent again with the solution at once; after a further LOGIN_BUSY the new challenge is
   * solved with at least one bit more, up to LOGIN_WORK_ROUNDS times. Then the LOGIN_BUSY is thrown.
   */
  async login(email: string, password: string, options?: LoginOptions): Promise<User> {
    if (this.token === null) await this.csrf(options);
    let work: { challenge: string; nonce: string } | undefined;
    let bits = 0;
    for (let round = 0; ; round++) {
      try {
        const { data } = await this.send<{ user: User; csrfToken: string }>({
          method: 'POST',
          path: '/api/auth/login',
          body: work ? { email, password, work } : { email, password },
          options,
        });
        this.token = data.csrfToken;
        return data.user;
      } catch (error) {
        const asked = round < LOGIN_WORK_ROUNDS ? workAskedBy(error) : null;
        if (asked === null) throw error;
        bits = Math.min(WORK_BITS_MAX, Math.max(asked.bits, bits + 1));
        const effort = { challenge: asked.challenge, bits };
        options?.onWork?.(effort);
        const solve = options?.solveWork ?? this.options.solveWork ?? solveInSlices;
        work = { challenge: asked.challenge, nonce: (await solve(effort, options?.signal)).nonce };
      }
    }
  }

  /**
   * Request options for a passkey sign-in (docs/rules.md#passkeys): a challenge for this browser, working
   * once, for 5 minutes. Fetches a CSRF token first if there is none.
   */
  async passkeySignInOptions(options?: CallOptions): Promise<WebAuthnJSON> {
    if (this.token === null) await this.csrf(options);
    return (await this.send<WebAuthnJSON>({ method: 'POST', path: '/api/auth/passkey/options', options }))
      .data;
  }

  /** Signs in with the browser's answer to those options; keeps the new CSRF token, like `login`. */
  async passkeySignIn(response: WebAuthnJSON, options?: CallOptions): Promise<User> {
    const { data } = await this.send<{ user: User; csrfToken: string }>({
      method: 'POST',
      path: '/api/auth/passkey/login',
      body: { response },
      options,
    });
    this.token = data.csrfToken;
    return data.user;
  }

  /** The signed-in user's passkeys, oldest first. */
  async passkeys(options?: CallOptions): Promise<Passkey[]> {
    return (await this.send<{ passkeys: Passkey[] }>({ method: 'GET', path: '/api/auth/passkeys', options }))
      .data.passkeys;
  }

  /** Creation options for a new passkey; 403 REAUTH_REQUIRED when the sign-in is older than 10 minutes. */
  async passkeyRegistrationOptions(options?: CallOptions): Promise<WebAuthnJSON> {
    const path = '/api/auth/passkeys/registration-options';
    return (await this.send<WebAuthnJSON>({ method: 'POST', path, options })).data;
  }

  /** Stores the browser's answer to those options as a passkey called `name`. */
  async addPasskey(name: string, response: WebAuthnJSON, options?: CallOptions): Promise<Passkey> {
    const body = { name, response };
    return (
      await this.send<{ passkey: Passkey }>({ method: 'POST', path: '/api/auth/passkeys', body, options })
    ).data.passkey;
  }

  async renamePasskey(id: number, name: string, options?: CallOptions): Promise<Passkey> {
    const path = `/api/auth/passkeys/${id}`;
    return (await this.send<{ passkey: Passkey }>({ method: 'PATCH', path, body: { name }, options })).data
      .passkey;
  }

  async removePasskey(id: number, options?: CallOptions): Promise<void> {
    await this.send<void>({ method: 'DELETE', path: `/api/auth/passkeys/${id}`, options });
  }

  /** Signs out; the server ends the session. */
  async logout(options?: CallOptions): Promise<void> {
    await this.send<void>({ method: 'POST', path: '/api/auth/logout', options });
    this.token = null;
  }

  async me(options?: CallOptions): Promise<User> {
    return (await this.send<{ user: User }>({ method: 'GET', path: '/api/auth/me', options })).data.user;
  }

  /** One page of tasks, filtered and sorted; pass the page's `nextCursor` as `cursor` for the next one. */
  async tasks(filters: TaskFilters = {}, options?: CallOptions): Promise<TaskPage> {
    const { limit, cursor, ...query } = filters;
    const { data } = await this.send<TaskPage>({
      method: 'GET',
      path: '/api/employee/tasks',
      query: { ...taskQuery(query), limit, cursor },
      options,
    });
    return data;
  }

  /** One page of the list: the same call as `tasks`. */
  listTasks(filters: TaskFilters = {}, options?: CallOptions): Promise<TaskPage> {
    return this.tasks(filters, options);
  }

  /** Every task `query` finds, in its sort, as CSV (docs/rules.md#export-and-import). */
  async exportTasks(query: TaskQuery = {}, options?: CallOptions): Promise<TaskExport> {
    const { data, disposition } = await this.send<string>({
      method: 'GET',
      path: '/api/employee/tasks/export',
      query: taskQuery(query),
      accept: 'text/csv',
      options,
    });
    const filename = /filename="([^"]+)"/.exec(disposition ?? '')?.[1] ?? 'tasks.csv';
    return { csv: data, filename };
  }

  /** The address of that export, for a link the browser downloads by itself (same origin: its cookies go along). */
  exportTasksUrl(query: TaskQuery = {}): string {
    return `${this.baseUrl}/api/employee/tasks/export${queryString(taskQuery(query))}`;
  }

  /**
   * Creates the tasks of a CSV file, all or none: 422 IMPORT_INVALID's `body.errors` lists the
   * wrong cells. Keyed as a create is, and retried with its key after a failure of unknown fate.
   */
  async importTasks(csv: string, options: BulkReassignOptions = {}): Promise<ImportOutcome> {
    const idempotencyKey =
      options.idempotencyKey === undefined ? newIdempotencyKey() : options.idempotencyKey;
    const request: Request = {
      method: 'POST',
      path: '/api/employee/tasks/import',
      csv,
      headers: idempotencyKey === null ? undefined : { 'idempotency-key': idempotencyKey },
      options,
    };
    for (let retries = 0; ; retries++) {
      try {
        const { data, replayed } = await this.send<{ created: number }>(request);
        return { created: data.created, idempotencyKey, replayed };
      } catch (error) {
        const wait =
          idempotencyKey !== null && retries < BULK_RETRIES ? this.keyedRetryWait(error, options) : null;
        if (wait === null) throw error;
        await this.sleep(wait * 1000, options.signal);
      }
    }
  }

  async task(id: number, options?: CallOptions): Promise<Task> {
    const path = `/api/employee/tasks/${encodeURIComponent(id)}`;
    return (await this.send<{ task: Task }>({ method: 'GET', path, options })).data.task;
  }

  /** One task and the ETag of its version, for editTask. */
  async getTask(id: number, options?: CallOptions): Promise<TaskWithEtag> {
    const path = `/api/employee/tasks/${encodeURIComponent(id)}`;
    const { data, etag } = await this.send<{ task: Task }>({ method: 'GET', path, options });
    return { task: data.task, etag: etag ?? '' };
  }

  /**
   * Creates a task under an Idempotency-Key (`options.idempotencyKey`, else a new one), retried
   * with the same key as bulkReassign is: a retried create makes one task (docs/rules.md#tasks).
   */
  async createTask(task: NewTask, options: BulkReassignOptions = {}): Promise<CreateTaskOutcome> {
    const idempotencyKey =
      options.idempotencyKey === undefined ? newIdempotencyKey() : options.idempotencyKey;
    const request: Request = {
      method: 'POST',
      path: '/api/employee/tasks',
      body: task,
      headers: idempotencyKey === null ? undefined : { 'idempotency-key': idempotencyKey },
      options,
    };
    for (let retries = 0; ; retries++) {
      try {
        const { data, etag, replayed } = await this.send<{ task: Task }>(request);
        return { task: data.task, etag: etag ?? '', idempotencyKey, replayed };
      } catch (error) {
        const wait =
          idempotencyKey !== null && retries < BULK_RETRIES ? this.keyedRetryWait(error, options) : null;
        if (wait === null) throw error;
        await this.sleep(wait * 1000, options.signal);
      }
    }
  }

  /**
   * Edits a task under If-Match `etag` (the one getTask or the last edit gave; `*` for any
   * version), sending only `fields`. A stale ETag throws 412 TASK_CHANGED whose `body.task` is the
   * task as it is now; nothing was saved.
   */
  async editTask(id: number, fields: TaskFields, etag: string, options?: CallOptions): Promise<TaskWithEtag> {
    const path = `/api/employee/tasks/${encodeURIComponent(id)}`;
    const headers = { 'if-match': etag };
    const answer = await this.send<{ task: Task }>({ method: 'PATCH', path, body: fields, headers, options });
    return { task: answer.data.task, etag: answer.etag ?? '' };
  }

  /** One page of a task's history, newest first; pass `nextCursor` for the next page. */
  async taskHistory(id: number, cursor?: string, options?: CallOptions): Promise<HistoryPage> {
    const path = `/api/employee/tasks/${encodeURIComponent(id)}/history`;
    return (await this.send<HistoryPage>({ method: 'GET', path, query: { cursor }, options })).data;
  }

  /** Admins: adds a client. 409 CLIENT_NAME_TAKEN when another has the name ignoring case. */
  async createClient(name: string, options?: CallOptions): Promise<Client> {
    const path = '/api/admin/clients';
    return (await this.send<{ client: Client }>({ method: 'POST', path, body: { name }, options })).data
      .client;
  }

  /** Admins: renames a client. 409 CLIENT_NAME_TAKEN when another has the name ignoring case. */
  async renameClient(id: number, name: string, options?: CallOptions): Promise<Client> {
    const path = `/api/admin/clients/${encodeURIComponent(id)}`;
    return (await this.send<{ client: Client }>({ method: 'PATCH', path, body: { name }, options })).data
      .client;
  }

  /** The employees tasks can be reassigned to. */
  async employees(options?: CallOptions): Promise<Colleague[]> {
    const path = '/api/employee/employees';
    return (await this.send<{ employees: Colleague[] }>({ method: 'GET', path, options })).data.employees;
  }

  /** Every client tasks belong to, sorted by name. */
  async clients(options?: CallOptions): Promise<Client[]> {
    const path = '/api/employee/clients';
    return (await this.send<{ clients: Client[] }>({ method: 'GET', path, options })).data.clients;
  }

  /**
   * Reassigns up to 50 tasks at once, under an Idempotency-Key (`options.idempotencyKey`, else a
   * new one). A try whose fate is unknown (no answer, 502, 503, 504) or whose key is still in flight
   * (409) is sent again with the same key, at most BULK_RETRIES times, after the answer's
   * Retry-After (a second when it names none; longer than the retry policy's maxWaitSeconds, it is
   * thrown instead): the server applies and charges the key once, and a retry of one that was
   * applied gets its stored answer (`replayed`). Never retried after a 429, or `retry: false`; the
   * thrown ApiError carries `retryAfter` and the bulk budget.
   */
  async bulkReassign(
    taskIds: readonly number[],
    assigneeId: number,
    options: BulkReassignOptions = {},
  ): Promise<BulkReassignOutcome> {
    const idempotencyKey =
      options.idempotencyKey === undefined ? newIdempotencyKey() : options.idempotencyKey;
    const request: Request = {
      method: 'PATCH',
      path: '/api/employee/tasks/bulk',
      body: { taskIds, assigneeId },
      headers: idempotencyKey === null ? undefined : { 'idempotency-key': idempotencyKey },
      options,
    };
    for (let retries = 0; ; retries++) {
      try {
        const { data, rateLimit, replayed } = await this.send<BulkReassignResult>(request);
        return { ...data, rateLimit, idempotencyKey, replayed };
      } catch (error) {
        const wait =
          idempotencyKey !== null && retries < BULK_RETRIES ? this.keyedRetryWait(error, options) : null;
        if (wait === null) throw error;
        await this.sleep(wait * 1000, options.signal);
      }
    }
  }

  /** The caller's budgets under every control that applies to it; spends nothing. */
  async rateLimits(options?: CallOptions): Promise<ControlReport[]> {
    const path = '/api/rate-limits';
    return (await this.send<{ controls: ControlReport[] }>({ method: 'GET', path, options })).data.controls;
  }

  /** Admins: the accounts and addresses a login control refuses right now. */
  async loginLocks(options?: CallOptions): Promise<LoginLock[]> {
    const path = '/api/admin/login-locks';
    return (await this.send<{ locks: LoginLock[] }>({ method: 'GET', path, options })).data.locks;
  }

  /** Admins: whether the answering server turns sign-in attempts away now, and its hashing gate's queues. */
  async loginPressure(options?: CallOptions): Promise<LoginPressure> {
    return (await this.send<LoginPressure>({ method: 'GET', path: '/api/admin/login-pressure', options }))
      .data;
  }

  /** Admins: clears an account's login-failure lock. */
  async resetLoginLock(email: string, options?: CallOptions): Promise<void> {
    await this.send<void>({ method: 'POST', path: '/api/admin/login-locks/reset', body: { email }, options });
  }

  /** Admins: another account's passkeys, oldest first (name and times only); 404 NOT_FOUND for no such account. */
  async userPasskeys(userId: number, options?: CallOptions): Promise<Passkey[]> {
    const path = `/api/admin/users/${userId}/passkeys`;
    return (await this.send<{ passkeys: Passkey[] }>({ method: 'GET', path, options })).data.passkeys;
  }

  /** Admins: removes one of an account's passkeys; 404 NOT_FOUND for no such account or a passkey of another. */
  async removeUserPasskey(userId: number, passkeyId: number, options?: CallOptions): Promise<void> {
    const path = `/api/admin/users/${userId}/passkeys/${passkeyId}`;
    await this.send<void>({ method: 'DELETE', path, options });
  }

  /**
   * Changes the signed-in user's password (docs/rules.md#accounts), a temporary one included. The
   * session rotates (the new CSRF token is kept), every other session ends and every known device
   * but this browser is forgotten. Throws 422 CURRENT_PASSWORD_INVALID, 422 PASSWORD_REFUSED (its
   * `body.reason`, a PasswordRefusalReason), 429 LOGIN_RATE_LIMIT, 503 PASSWORD_CHECK_UNAVAILABLE.
   */
  async changePassword(currentPassword: string, newPassword: string, options?: CallOptions): Promise<void> {
    const { data } = await this.send<{ csrfToken: string }>({
      method: 'POST',
      path: '/api/auth/password',
      body: { currentPassword, newPassword },
      options,
    });
    this.token = data.csrfToken;
  }

  /** Where the signed-in user is signed in, the most recently used session first (`current` marks this one). */
  async sessions(options?: CallOptions): Promise<Session[]> {
    return (await this.send<{ sessions: Session[] }>({ method: 'GET', path: '/api/auth/sessions', options }))
      .data.sessions;
  }

  /** Ends one of the user's sessions on every instance; ending the current one signs out. 404 NOT_FOUND if it ended already. */
  async endSession(id: string, options?: CallOptions): Promise<void> {
    const path = `/api/auth/sessions/${encodeURIComponent(id)}`;
    await this.send<void>({ method: 'DELETE', path, options });
  }

  /** Ends every session of the user but this one; answers how many ended. */
  async endOtherSessions(options?: CallOptions): Promise<number> {
    const path = '/api/auth/sessions/end-others';
    return (await this.send<{ ended: number }>({ method: 'POST', path, options })).data.ended;
  }

  /** The user's known devices, the most recently used first. */
  async devices(options?: CallOptions): Promise<Device[]> {
    return (await this.send<{ devices: Device[] }>({ method: 'GET', path: '/api/auth/devices', options }))
      .data.devices;
  }

  /** Forgets one of the user's known devices: that browser signs in as an unknown one from now on. */
  async forgetDevice(id: number, options?: CallOptions): Promise<void> {
    await this.send<void>({ method: 'DELETE', path: `/api/auth/devices/${encodeURIComponent(id)}`, options });
  }

  /** One page (50) of the signed-in user's own security events, newest first; pass `nextCursor` as `cursor`. */
  async accountEvents(
    query: { readonly cursor?: string } = {},
    options?: CallOptions,
  ): Promise<SecurityEventPage> {
    const path = '/api/auth/security-events';
    return (
      await this.send<SecurityEventPage>({ method: 'GET', path, query: { cursor: query.cursor }, options })
    ).data;
  }

  /** Admins: every account, by id. */
  async users(options?: CallOptions): Promise<AdminUser[]> {
    return (await this.send<{ users: AdminUser[] }>({ method: 'GET', path: '/api/admin/users', options }))
      .data.users;
  }

  /** Admins: adds an account; its temporary password is in the answer, this once. 409 EMAIL_TAKEN. */
  async createUser(
    account: { readonly email: string; readonly name: string; readonly role: Role },
    options?: CallOptions,
  ): Promise<CreatedUser> {
    return (
      await this.send<CreatedUser>({ method: 'POST', path: '/api/admin/users', body: account, options })
    ).data;
  }

  /** Admins: renames, changes the role, disables or enables an account. 422 LAST_ADMIN, 404 NOT_FOUND. */
  async updateUser(id: number, edit: AccountEdit, options?: CallOptions): Promise<AdminUser> {
    const path = `/api/admin/users/${encodeURIComponent(id)}`;
    return (await this.send<{ user: AdminUser }>({ method: 'PATCH', path, body: edit, options })).data.user;
  }

  /** Admins: a new temporary password for the account (answered this once); its sessions and devices end. */
  async resetUserPassword(id: number, options?: CallOptions): Promise<string> {
    const path = `/api/admin/users/${encodeURIComponent(id)}/password-reset`;
    return (await this.send<{ temporaryPassword: string }>({ method: 'POST', path, options })).data
      .temporaryPassword;
  }

  /** Admins: one page of security events, newest first; pass `nextCursor` as `cursor` for older ones. */
  async securityEvents(query: SecurityEventQuery = {}, options?: CallOptions): Promise<SecurityEventPage> {
    const { limit, cursor } = query;
    const path = '/api/admin/security-events';
    return (await this.send<SecurityEventPage>({ method: 'GET', path, query: { limit, cursor }, options }))
      .data;
  }

  /** One call, with at most one retry: after a 429 or 503 on a GET (when allowed), or after a stale CSRF token. */
  private async send<T>(request: Request): Promise<Answer<T>> {
    try {
      return await this.attempt<T>(request);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const signal = request.options?.signal;
      const wait = this.retryWait(request, error);
      if (wait !== null) {
        await this.sleep(wait * 1000, signal);
        return this.attempt<T>(request);
      }
      // Another tab may have signed in or out since our token was issued: fetch the current one.
      if (error.code === 'CSRF_INVALID' && request.method !== 'GET') {
        await this.csrf({ signal });
        return this.attempt<T>(request);
      }
      throw error;
    }
  }

  /**
   * Seconds to wait before retrying `request` after `error`, or null to throw it. A 503 that says
   * when to come back (the database away, docs/rules.md#faults) is retried by default, a 429 only when
   * asked: the first is the service's passing trouble, the second the caller's own budget.
   */
  private retryWait(request: Request, error: ApiError): number | null {
    if (request.method !== 'GET' || error.retryAfter === null) return null;
    if (error.status !== 429 && error.status !== 503) return null;
    const setting = request.options?.retry ?? this.options.retry ?? error.status === 503;
    if (setting === false) return null;
    const policy = setting === true ? DEFAULT_RETRY : setting;
    return error.retryAfter <= policy.maxWaitSeconds ? error.retryAfter : null;
  }

  /** Seconds to wait before sending a keyed request again after `error`, or null to throw it. */
  private keyedRetryWait(error: unknown, options: CallOptions): number | null {
    if (!(error instanceof ApiError)) return null; // an abort, say
    const setting = options.retry ?? this.options.retry;
    if (setting === false) return null;
    const unknownFate = error.code === 'NETWORK_ERROR' || RETRIED_STATUSES.has(error.status);
    if (!unknownFate && error.code !== 'IDEMPOTENCY_KEY_IN_FLIGHT') return null;
    const wait = error.retryAfter ?? BULK_RETRY_DEFAULT_SECONDS;
    const policy = typeof setting === 'object' ? setting : DEFAULT_RETRY;
    return wait <= policy.maxWaitSeconds ? wait : null;
  }

  private async attempt<T>({
    method,
    path,
    query,
    body,
    headers: own,
    csv,
    accept,
    options,
  }: Request): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: accept ?? 'application/json', ...own };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (csv !== undefined) headers['content-type'] = 'text/csv; charset=utf-8';
    if (method !== 'GET' && this.token !== null) headers['x-csrf-token'] = this.token;
    const cookie = this.options.cookieJar?.header();
    if (cookie) headers.cookie = cookie;

    let response: Response;
    try {
      response = await (options?.fetch ?? this.fetch)(this.baseUrl + path + queryString(query), {
        method,
        headers,
        body: csv ?? (body === undefined ? undefined : JSON.stringify(body)),
        credentials: 'same-origin',
        signal: options?.signal,
      });
    } catch (cause) {
      if (options?.signal?.aborted) throw cause;
      throw new ApiError({
        status: 0,
        code: 'NETWORK_ERROR',
        message: 'The API could not be reached.',
        cause,
      });
    }
    const now = this.now();
    this.options.cookieJar?.store(response.headers.getSetCookie?.() ?? [], now);
    const rateLimit = parseRateLimit(response.headers, now);
    if (rateLimit) {
      if (rateLimit.policy) this.latest.set(rateLimit.policy, rateLimit);
      this.options.onRateLimit?.(rateLimit);
    }
    if (response.ok) {
      const data = (
        response.status === 204 ? undefined : accept ? await response.text() : await response.json()
      ) as T;
      return {
        disposition: response.headers.get('content-disposition'),
        data,
        rateLimit,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        etag: response.headers.get('etag'),
      };
    }
    throw await toApiError(response, rateLimit, now);
  }
}

async function toApiError(
  response: Response,
  rateLimit: RateLimitState | null,
  now: number,
): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = await response.json();
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: a proxy's error page, say. The status still tells what happened.
  }
  const fromBody = typeof body.retryAfter === 'number' ? body.retryAfter : null;
  return new ApiError({
    status: response.status,
    code: typeof body.code === 'string' ? body.code : 'UNEXPECTED_RESPONSE',
    message:
      typeof body.message === 'string'
        ? body.message
        : `The API answered ${response.status} ${response.statusText}`.trim(),
    retryAfter: parseRetryAfter(response.headers.get('retry-after'), now) ?? fromBody,
    rateLimit,
    body,
  });
}

/** The challenge a LOGIN_BUSY carries, checked; null for any other error or a malformed one. */
function workAskedBy(error: unknown): WorkAsked | null {
  if (!(error instanceof ApiError) || error.code !== 'LOGIN_BUSY') return null;
  const work = error.body?.work as Partial<WorkAsked> | undefined;
  if (!work || typeof work.challenge !== 'string' || !Number.isInteger(work.bits)) return null;
  const bits = work.bits as number;
  return bits >= 1 && bits <= WORK_BITS_MAX ? { challenge: work.challenge, bits } : null;
}

/** The list's and the export's filters as query parameters. */
function taskQuery(query: TaskQuery): NonNullable<Request['query']> {
  const { q, assigneeId, clientId, status, priority, dueBefore, sort } = query;
  return { q, assigneeId, clientId, status, priority, dueBefore, sort } as NonNullable<Request['query']>;
}

function queryString(query: Request['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    // A repeated parameter (several statuses) is one value each.
    for (const one of Array.isArray(value) ? value : [value]) params.append(key, String(one));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * A new Idempotency-Key: a random UUID. `crypto.randomUUID` exists only in secure contexts (HTTPS,
 * localhost); a page served over plain HTTP makes the same version-4 UUID from getRandomValues.
 */
export function newIdempotencyKey(): string {
  if (typeof globalThis.crypto.randomUUID === 'function') return globalThis.crypto.randomUUID();
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** setTimeout as a promise that an AbortSignal can cut short. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
