// Tasks as the portal reads and changes them: pages, one task, assignees, clients, bulk reassignment.
import type { Client, ClientsRepository } from '../db/repositories/clients.ts';
import type {
  AlongsideReassignment,
  BulkOutcome,
  Task,
  TaskFilter,
  TasksRepository,
} from '../db/repositories/tasks.ts';
import type { Colleague, UsersRepository } from '../db/repositories/users.ts';

export type { AlongsideReassignment, BulkOutcome };

export interface TasksOptions {
  readonly tasks: TasksRepository;
  readonly users: Pick<UsersRepository, 'listEmployees'>;
  readonly clients: ClientsRepository;
}

export class Tasks {
  private readonly options: TasksOptions;

  constructor(options: TasksOptions) {
    this.options = options;
  }

  /** Up to `filter.limit` tasks, oldest id first, after `filter.afterId` (the keyset cursor). */
  list(filter: TaskFilter): Promise<Task[]> {
    return this.options.tasks.list(filter);
  }

  /** One task, or null. */
  find(id: number): Promise<Task | null> {
    return this.options.tasks.find(id);
  }

  /** The employees tasks can be reassigned to: those who may sign in, as colleagues see them. */
  assignees(): Promise<Colleague[]> {
    return this.options.users.listEmployees();
  }

  /** Every client tasks belong to, sorted by name. */
  clients(): Promise<Client[]> {
    return this.options.clients.listByName();
  }

  /**
   * Reassigns `taskIds` to `assigneeId` at once, atomically; with `alongside` (an Idempotency-Key's
   * answer to store), in the same transaction.
   */
  bulkReassign(
    taskIds: readonly number[],
    assigneeId: number,
    alongside?: AlongsideReassignment,
  ): Promise<BulkOutcome> {
    return this.options.tasks.bulkReassign(taskIds, assigneeId, alongside);
  }
}
