// Tasks as CSV (docs/rules.md#export-and-import): the columns, the guard against formulas, and the export's
// stream.
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FoundTask } from '../db/repositories/task-search.ts';
import type { TaskPosition, TaskSearch } from '../domain.ts';

/** The export's columns, in order; an import takes them in any order. */
export const CSV_COLUMNS = [
  'id',
  'client',
  'title',
  'description',
  'status',
  'priority',
  'dueDate',
  'assignee',
] as const;
export type CsvColumn = (typeof CSV_COLUMNS)[number];

/** Tasks read from the database per query of an export: memory holds one batch at a time. */
export const EXPORT_BATCH = 1000;

/**
 * A cell a spreadsheet would run as a formula (OWASP's CSV injection advice): it begins with one of
 * = + - @ tab CR, possibly after quotes the guard itself added. Such a cell is written with one
 * more leading `'`, and an import takes exactly one away, so every text goes out and back as it was.
 */
const FORMULA = /^'*[=+\-@\t\r]/;

export const guardCell = (text: string): string => (FORMULA.test(text) ? `'${text}` : text);
export const unguardCell = (text: string): string =>
  FORMULA.test(text) && text.startsWith("'") ? text.slice(1) : text;

/** One task as an export row, in CSV_COLUMNS' order. */
function rowOf({ task, clientName, assigneeEmail }: FoundTask): string[] {
  return [
    String(task.id),
    clientName,
    task.title,
    task.description,
    task.status,
    task.priority,
    task.dueDate ?? '',
    assigneeEmail ?? '',
  ].map(guardCell);
}

/**
 * The export: a header row, then every task `search` finds, read in keyset batches as the client
 * takes them (the stream's back pressure pauses the reads), RFC 4180 with CRLF line ends.
 */
export function exportStream(
  find: (search: TaskSearch, after: TaskPosition | undefined, limit: number) => Promise<FoundTask[]>,
  search: TaskSearch,
): Readable {
  async function* rows() {
    let after: TaskPosition | undefined;
    for (;;) {
      const batch = await find(search, after, EXPORT_BATCH);
      for (const found of batch) yield rowOf(found);
      if (batch.length < EXPORT_BATCH) return;
      after = batch[batch.length - 1]!.position;
    }
  }
  const csv = stringify({ header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows' });
  const source = Readable.from(rows(), { objectMode: true, highWaterMark: 64 });
  source.on('error', (error) => csv.destroy(error));
  return source.pipe(csv);
}
