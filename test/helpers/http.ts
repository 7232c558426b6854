// Assertions of the HTTP tests: the API's error shape (docs/rules.md#conventions), the task table.
import assert from 'node:assert/strict';
import type { ManualClock } from '../../src/clock.ts';
import type { Response, TestApp } from './app.ts';

/** Asserts a `{code, message, ...}` error with this status and code; returns the body for more checks. */
export function assertError(response: Response, status: number, code: string): Record<string, unknown> {
  const body = response.json();
  assert.equal(
    response.statusCode,
    status,
    `expected ${status} ${code}, got ${response.statusCode} ${response.body}`,
  );
  assert.equal(body.code, code);
  assert.equal(typeof body.message, 'string');
  assert.match(String(response.headers['content-type']), /^application\/json/);
  return body;
}

/** Every task's assignee and update time, read from the database, to show that nothing changed. */
export async function taskSnapshot({ database }: TestApp): Promise<string[]> {
  const rows = await database.db.query<{ id: number; assignee_id: number | null; updated_at: string }>(
    'SELECT id, assignee_id, updated_at::text AS updated_at FROM tasks ORDER BY id',
  );
  return rows.map((row) => `${row.id}:${row.assignee_id}:${row.updated_at}`);
}

/**
 * Awaits `answers`, moving `clock` a second on whenever something sleeps on it: the login gate holds
 * some answers (a shed, an attempt over its account's backlog) until its bound passes on the app's clock.
 */
export async function answeredOnClock<T>(clock: ManualClock, answers: Promise<T>[]): Promise<T[]> {
  const all = Promise.all(answers);
  let answered = false;
  void all.finally(() => {
    answered = true;
  });
  while (!answered) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (clock.sleeping > 0) clock.advance(1000);
  }
  return all;
}
