// Importing tasks from CSV (docs/rules.md#export-and-import): every row checked, then all created in one
// transaction, or none.
import { parse } from 'csv-parse/sync';
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import {
  assigneeIdsByEmail,
  clientIdsByName,
  type ImportedTask,
  insertImported,
} from '../db/repositories/task-writes.ts';
import { DESCRIPTION_MAX_LENGTH, TASK_PRIORITIES, TASK_STATUSES } from '../domain.ts';
import { normaliseEmail } from '../email.ts';
import { ApiError, type ImportRowCode } from '../errors.ts';
import { IMPORT_MAX_ROWS, UNSTORABLE_TEXT } from '../limits.ts';
import { CSV_COLUMNS, type CsvColumn, unguardCell } from './task-csv.ts';
import { checkedFields } from './task-rules.ts';

/** One wrong cell: `line` as a spreadsheet numbers rows (the header is 1), `column` its header. */
export interface ImportError {
  line: number;
  column: string;
  code: ImportRowCode;
  message: string;
}

/** The errors an IMPORT_INVALID lists: enough to fix a file by, never a body the size of the file. */
export const IMPORT_ERRORS_SHOWN = 100;
/** Rows per INSERT statement. */
const INSERT_BATCH = 1000;

/** Work that commits with an import (an Idempotency-Key's answer); a throw rolls the import back. */
export type AlongsideImport = (created: number, connection: Queryable) => Promise<void>;

function notCsv(problem: string): ApiError {
  return new ApiError(
    'VALIDATION_ERROR',
    { errors: [{ path: 'body', message: problem }] },
    `Invalid request: body ${problem}.`,
  );
}

interface Row {
  line: number;
  cells: Partial<Record<CsvColumn, string>>;
  extra: boolean;
}

/**
 * The file as rows of cells by column name. Every record is one spreadsheet row, whatever line
 * breaks its quoted cells hold, so a row's line is its record's number; blank records are skipped
 * but keep their number. A header must name `client` and `title`, each known column at most once.
 */
export function readCsv(text: string): Row[] {
  if (UNSTORABLE_TEXT.test(text))
    throw notCsv('holds a character no text may hold (U+0000 or a lone surrogate)');
  let records: string[][];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: false });
  } catch (error) {
    throw notCsv(`is not CSV (${(error as Error).message.replace(/\.$/, '')})`);
  }
  const header = records[0]?.map((name) => name.trim());
  if (!header || header.every((name) => name === '')) throw notCsv('has no header row');
  const unknown = header.find((name) => !(CSV_COLUMNS as readonly string[]).includes(name));
  if (unknown !== undefined)
    throw notCsv(`has a column ${JSON.stringify(unknown)}; the columns are ${CSV_COLUMNS.join(', ')}`);
  const repeated = header.find((name, i) => header.indexOf(name) !== i);
  if (repeated !== undefined) throw notCsv(`names the column ${repeated} twice`);
  for (const required of ['client', 'title'])
    if (!header.includes(required)) throw notCsv(`has no ${required} column in its header row`);
  if (records.length - 1 > IMPORT_MAX_ROWS)
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      {},
      `An import may hold at most ${IMPORT_MAX_ROWS.toLocaleString('en')} rows besides its header.`,
    );
  const rows: Row[] = [];
  for (let i = 1; i < records.length; i++) {
    const record = records[i]!;
    if (record.every((cell) => cell === '')) continue;
    const cells: Row['cells'] = {};
    header.forEach((name, j) => {
      cells[name as CsvColumn] = unguardCell(record[j] ?? '');
    });
    rows.push({ line: i + 1, cells, extra: record.slice(header.length).some((cell) => cell !== '') });
  }
  return rows;
}

export class TaskImporter {
  private readonly db: Database;
  private readonly clock: Clock;

  constructor(options: { db: Database; clock: Clock }) {
    this.db = options.db;
    this.clock = options.clock;
  }

  /**
   * Imports `text` by `actorId`: 400 when it is not CSV with a header, 422 IMPORT_INVALID listing
   * the first wrong cells when any row is wrong (nothing created), else every task and its
   * `import` entry in one transaction; answers how many were created.
   */
  async import(actorId: number, text: string, alongside?: AlongsideImport): Promise<number> {
    const rows = readCsv(text);
    return this.db.transaction(async (connection) => {
      const { tasks, errors } = await checkRows(connection, rows);
      if (errors.length > 0)
        throw new ApiError('IMPORT_INVALID', { errors: errors.slice(0, IMPORT_ERRORS_SHOWN) });
      const atMs = this.clock.now();
      for (let i = 0; i < tasks.length; i += INSERT_BATCH)
        await insertImported(connection, tasks.slice(i, i + INSERT_BATCH), actorId, atMs);
      await alongside?.(tasks.length, connection);
      return tasks.length;
    });
  }
}

/** Each row as a task to create, or the errors of its cells; clients and assignees looked up at once. */
async function checkRows(
  db: Queryable,
  rows: Row[],
): Promise<{ tasks: ImportedTask[]; errors: ImportError[] }> {
  const clients = await clientIdsByName(db, [...new Set(rows.map((row) => row.cells.client?.trim() ?? ''))]);
  const emails = [...new Set(rows.map((row) => normaliseEmail(row.cells.assignee ?? '')).filter(Boolean))];
  const assignees = await assigneeIdsByEmail(db, emails);
  const tasks: ImportedTask[] = [];
  const errors: ImportError[] = [];
  for (const { line, cells, extra } of rows) {
    const wrong = (column: string, code: ImportRowCode, message: string) =>
      errors.push({ line, column, code, message });
    // Cells past the header's last column have no column name: the error names none.
    if (extra) wrong('', 'EXTRA_CELLS', 'The row has more cells than the header has columns.');
    const client = cells.client?.trim() ?? '';
    const clientId = clients.get(client);
    if (client === '') wrong('client', 'REQUIRED', 'A task needs a client.');
    else if (clientId === undefined)
      wrong('client', 'CLIENT_NOT_FOUND', `No client is named ${JSON.stringify(client)}.`);
    const status = cells.status?.trim() || 'open';
    if (!(TASK_STATUSES as readonly string[]).includes(status))
      wrong('status', 'INVALID', `The status must be one of ${TASK_STATUSES.join(', ')}.`);
    const priority = cells.priority?.trim() || 'normal';
    if (!(TASK_PRIORITIES as readonly string[]).includes(priority))
      wrong('priority', 'INVALID', `The priority must be one of ${TASK_PRIORITIES.join(', ')}.`);
    const email = normaliseEmail(cells.assignee ?? '');
    const assigneeId = email === '' ? null : (assignees.get(email) ?? null);
    if (email !== '' && assigneeId === null)
      wrong('assignee', 'ASSIGNEE_NOT_FOUND', `${JSON.stringify(email)} is not an enabled employee.`);
    const title = cells.title ?? '';
    const description = cells.description ?? '';
    const dueDate = cells.dueDate?.trim() || null;
    if (title.trim() === '') wrong('title', 'REQUIRED', 'A task needs a title.');
    // Characters as a create counts them (code points): only a text longer in UTF-16 units can be too long.
    if (description.length > DESCRIPTION_MAX_LENGTH && [...description].length > DESCRIPTION_MAX_LENGTH)
      wrong('description', 'INVALID', `A description is at most ${DESCRIPTION_MAX_LENGTH} characters.`);
    // The field rules of a create, each broken one named by its column.
    let checked = { title: title.trim(), description, dueDate };
    for (const [column, value] of [
      ['title', title],
      ['description', description],
      ['dueDate', dueDate],
    ] as const) {
      if (column === 'title' && title.trim() === '') continue;
      try {
        checked = { ...checked, ...checkedFields({ [column]: value }) };
      } catch (error) {
        const problem = (error as ApiError).details?.errors as { message: string }[] | undefined;
        const message = problem?.[0]?.message ?? 'is not valid';
        wrong(column, 'INVALID', `The ${column} ${message}.`);
      }
    }
    if (clientId !== undefined)
      tasks.push({
        clientId,
        title: checked.title,
        description: checked.description,
        status,
        priority,
        dueDate: checked.dueDate,
        assigneeId,
      });
  }
  return { tasks, errors };
}
