// Clients (the companies tasks belong to): their names, for people who do not know them by number.
import type { Queryable } from '../database.ts';

export interface Client {
  id: number;
  name: string;
}

/**
 * Names in the order people look them up: letters before case and accents ("acme" beside "Acme",
 * "Émile" beside "Emile"), then by id. Sorted here rather than by SQL's ORDER BY, whose order
 * follows the database's collation: PGlite's and a PostgreSQL server's may differ. Made on the
 * first list, not at start: a collator loads ICU's collation data (about 40 ms of the start,
 * BENCHMARKS.md).
 */
let byName: Intl.Collator | null = null;

export class ClientsRepository {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = db;
  }

  /** Every client, sorted by name. */
  async listByName(): Promise<Client[]> {
    const rows = await this.db.query<Client>('SELECT id, name FROM clients');
    byName ??= new Intl.Collator('en', { sensitivity: 'variant', numeric: true });
    const collator = byName;
    return rows.sort((a, b) => collator.compare(a.name, b.name) || a.id - b.id);
  }
}
