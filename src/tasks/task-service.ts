// Tasks a team runs (docs/rules.md#tasks): create, read, edit under a version, history — each change with its
// entry in one transaction.
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import {
  clientExists,
  findTask,
  historyPage,
  insertHistory,
  insertTask,
  isAssignable,
  updateAtVersion,
} from '../db/repositories/task-writes.ts';
import {
  type FieldChange,
  HISTORY_PAGE_SIZE,
  type HistoryEntry,
  type Task,
  WRITABLE_FIELDS,
  type WritableFields,
} from '../domain.ts';
import { ApiError } from '../errors.ts';
import type { Precondition } from './task-etag.ts';
import { checkedFields } from './task-rules.ts';

/** The fields a create takes: a client and a title at least. */
export type NewTask = WritableFields & { clientId: number; title: string };

/** Work that commits with a create (an Idempotency-Key's answer); a throw rolls the create back. */
export type AlongsideCreate = (task: Task, connection: Queryable) => Promise<void>;

export class TaskService {
  private readonly db: Database;
  private readonly clock: Clock;

  constructor(options: { db: Database; clock: Clock }) {
    this.db = options.db;
    this.clock = options.clock;
  }

  get(id: number): Promise<Task | null> {
    return findTask(this.db, id);
  }

  /**
   * Creates a task by `actorId`, its `create` entry listing every field it starts with. 400 for a
   * broken field, 422 for an unknown client or an assignee who is not an enabled employee.
   */
  async create(actorId: number, fields: NewTask, alongside?: AlongsideCreate): Promise<Task> {
    const checked = checkedFields(fields);
    return this.db.transaction(async (connection) => {
      await checkReferences(connection, checked, null);
      const atMs = this.clock.now();
      const task = await insertTask(connection, checked, actorId, atMs);
      const changes = WRITABLE_FIELDS.map((field) => ({ field, from: null, to: task[field] }));
      await insertHistory(connection, { taskId: task.id, atMs, actorId, source: 'create', changes });
      await alongside?.(task, connection);
      return task;
    });
  }

  /**
   * Edits task `id` under `precondition` (the request's If-Match), in the order of checks:
   * fields (400), the task (404), the precondition (428, 412 with the task as it is), the client
   * and assignee it would name (422). Nothing differing: the task as it was, no new version, no
   * entry. Else one conditional update at the version read, and its `edit` entry, in one
   * transaction: two edits of one version racing end with one winner, the other a 412.
   */
  async edit(
    actorId: number,
    id: number,
    precondition: Precondition | undefined,
    fields: WritableFields,
  ): Promise<Task> {
    const checked = checkedFields(fields);
    return this.db.transaction(async (connection) => {
      // Under `*` the edit applies to whatever version is there: the row is locked as it is read,
      // so no change lands between the read and the update. Under a tag nothing is locked: the
      // conditional update decides, and a change that landed in between makes it a 412.
      const current = await findTask(connection, id, precondition?.kind === 'any');
      if (!current) throw new ApiError('NOT_FOUND', {}, `Task ${id} does not exist.`);
      if (!precondition) throw new ApiError('PRECONDITION_REQUIRED');
      if (precondition.kind === 'versions' && !precondition.versions.includes(current.version))
        throw changed(current);
      const changes = changesOf(current, checked);
      if (changes.length === 0) return current;
      await checkReferences(connection, checked, current);
      const edited = await updateAtVersion(
        connection,
        id,
        current.version,
        Object.fromEntries(changes.map(({ field, to }) => [field, to])),
        this.clock.now(),
      );
      if (!edited) {
        // Another change committed since the read: the task as it is now (no task is ever deleted).
        const now = await findTask(connection, id);
        throw now ? changed(now) : new ApiError('NOT_FOUND', {}, `Task ${id} does not exist.`);
      }
      await insertHistory(connection, {
        taskId: id,
        atMs: Date.parse(edited.updatedAt),
        actorId,
        source: 'edit',
        changes,
      });
      return edited;
    });
  }

  /** A page of task `id`'s history, newest first, before entry `beforeId`; null when there is no such task. */
  async history(
    id: number,
    beforeId: number | undefined,
    limit: number = HISTORY_PAGE_SIZE,
  ): Promise<HistoryEntry[] | null> {
    if (!(await findTask(this.db, id))) return null;
    return historyPage(this.db, id, beforeId, limit);
  }
}

function changed(task: Task): ApiError {
  return new ApiError('TASK_CHANGED', { task });
}

/** The fields of `wanted` whose value differs from `current`'s, in the order history lists them. */
function changesOf(current: Task, wanted: WritableFields): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of WRITABLE_FIELDS) {
    const to = wanted[field];
    if (to !== undefined && to !== current[field]) changes.push({ field, from: current[field], to });
  }
  return changes;
}

/**
 * The client and assignee the fields would name: 422 when either is unknown. On an edit, only a
 * value that changes is looked at: a task whose assignee was disabled since can still be edited
 * in its other fields.
 */
async function checkReferences(db: Queryable, fields: WritableFields, current: Task | null): Promise<void> {
  const { clientId, assigneeId } = fields;
  if (clientId !== undefined && clientId !== current?.clientId && !(await clientExists(db, clientId)))
    throw new ApiError('CLIENT_NOT_FOUND');
  if (
    assigneeId !== undefined &&
    assigneeId !== null &&
    assigneeId !== current?.assigneeId &&
    !(await isAssignable(db, assigneeId))
  )
    throw new ApiError('ASSIGNEE_NOT_FOUND');
}
