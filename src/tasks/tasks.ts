// Tasks as the portal reads and changes them: pages, one task, assignees, clients, bulk reassignment.
import type { Clock } from '../clock.ts';
import type { Client, ClientsRepository } from '../db/repositories/clients.ts';
import type { FoundTask } from '../db/repositories/task-search.ts';
import type { AlongsideReassignment, BulkOutcome, TasksRepository } from '../db/repositories/tasks.ts';
import type { Colleague, UsersRepository } from '../db/repositories/users.ts';
import type { Task, TaskPosition, TaskSearch } from '../domain.ts';

export type { AlongsideReassignment, BulkOutcome, FoundTask };

export interface TasksOptions {
  readonly tasks: TasksRepository;
  readonly users: Pick<UsersRepository, 'listEmployees'>;
  readonly clients: ClientsRepository;
  /** The time a bulk reassignment's history entries carry. */
  readonly clock: Clock;
}

export class Tasks {
  private readonly options: TasksOptions;

  constructor(options: TasksOptions) {
    this.options = options;
  }

  /** Up to `limit` tasks matching `search` in its order, after `after` (docs/rules.md#finding-tasks). */
  search(search: TaskSearch, after: TaskPosition | undefined, limit: number): Promise<FoundTask[]> {
    return this.options.tasks.search(search, after, limit);
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

  /** A new client named `name` (already checked), or null when another has that name. */
  addClient(name: string): Promise<Client | null> {
    return this.options.clients.add(name);
  }

  /** Renames client `id` to `name` (already checked). */
  renameClient(id: number, name: string): Promise<Client | 'not-found' | 'taken'> {
    return this.options.clients.rename(id, name);
  }

  /**
   * Reassigns `taskIds` to `assigneeId` at once, atomically, by `actorId` (their history entries
   * say so); with `alongside` (an Idempotency-Key's answer to store), in the same transaction.
   */
  bulkReassign(
    taskIds: readonly number[],
    assigneeId: number,
    actorId: number,
    alongside?: AlongsideReassignment,
  ): Promise<BulkOutcome> {
    return this.options.tasks.bulkReassign(taskIds, assigneeId, {
      actorId,
      atMs: this.options.clock.now(),
      alongside,
    });
  }
}
