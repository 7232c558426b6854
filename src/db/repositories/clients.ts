// Clients (the companies tasks belong to): their names, listed, added and renamed (docs/rules.md#tasks).
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

  /** Adds a client; null when another has the name ignoring case (the unique index decides a race). */
  async add(name: string): Promise<Client | null> {
    const [row] = await this.db.query<Client>(
      'INSERT INTO clients (name) VALUES ($1) ON CONFLICT ((lower(name))) DO NOTHING RETURNING id, name',
      [name],
    );
    return row ?? null;
  }

  /**
   * Renames client `id`: 'not-found', 'taken' when another client has the name ignoring case, or
   * the client renamed. The unique index on lower(name) decides two renames racing to one name.
   */
  async rename(id: number, name: string): Promise<Client | 'not-found' | 'taken'> {
    try {
      const [row] = await this.db.query<Client>(
        'UPDATE clients SET name = $2 WHERE id = $1 RETURNING id, name',
        [id, name],
      );
      return row ?? 'not-found';
    } catch (error) {
      if (isUniqueViolation(error)) return 'taken';
      throw error;
    }
  }
}

/** PostgreSQL's unique_violation, from the server's driver and from PGlite alike. */
function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
