// Opaque keyset cursors for paged lists: a label and the last row's key, base64url-encoded.
import { ApiError } from '../errors.ts';

export interface KeysetCursor {
  encode(key: readonly number[]): string;
  /** The key a cursor carries; a cursor this API did not issue is a 400 VALIDATION_ERROR. */
  decode(cursor: string): number[];
  /**
   * Turns rows fetched with `limit + 1` into one page and the cursor of the next (null after the
   * last page): the extra row only says that more exist.
   */
  page<Row>(
    rows: Row[],
    limit: number,
    keyOf: (row: Row) => readonly number[],
  ): { rows: Row[]; nextCursor: string | null };
}

/**
 * A cursor codec for keys of non-negative integers, each at most its `maxima` entry. Clients
 * treat the text as opaque; the bounds keep a forged value from reaching a query and failing
 * there as a 500 (an id past PostgreSQL's integer range, say).
 */
export function keysetCursor(label: string, maxima: readonly number[]): KeysetCursor {
  const pattern = new RegExp(`^${label}${':(\\d{1,16})'.repeat(maxima.length)}$`);
  const encode = (key: readonly number[]) => Buffer.from([label, ...key].join(':')).toString('base64url');
  return {
    encode,
    decode(cursor) {
      const match = pattern.exec(Buffer.from(cursor, 'base64url').toString());
      const key = match ? match.slice(1).map(Number) : [];
      if (!match || key.some((value, i) => value > maxima[i]!))
        throw new ApiError('VALIDATION_ERROR', {}, 'Invalid request: cursor is not one this API issued.');
      return key;
    },
    page(rows, limit, keyOf) {
      if (rows.length <= limit) return { rows, nextCursor: null };
      const kept = rows.slice(0, limit);
      return { rows: kept, nextCursor: encode(keyOf(kept[kept.length - 1]!)) };
    },
  };
}
