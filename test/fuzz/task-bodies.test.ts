// Seeded bodies for the task and client routes (docs/rules.md#tasks), mostly plausible, often broken: never a
// 5xx, nothing half-written, every stored task within the rules.
//
// FUZZ_SEED picks the run, FUZZ_RUNS its length:  FUZZ_RUNS=20000 FUZZ_SEED=7 node --test test/fuzz/task-bodies.test.ts
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { skipUnless } from '../helpers/services.ts';
import { Random } from './generators.ts';

after(closeTestDatabases);

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_128);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1200);
const skipPostgres = await skipUnless('postgres');

/** Values a field may be sent: the right kind, near misses, and the wrong kind. */
const VALUES: Record<string, readonly unknown[]> = {
  clientId: [1, 2, 3, 0, -1, 999, 2_147_483_648, 1.5, '1', null, true, [], {}],
  title: [
    'Fix it',
    '  padded  ',
    '',
    '   ',
    'x'.repeat(200),
    'x'.repeat(201),
    ' '.repeat(300),
    'tab\there',
    '\u0085',
    '😀'.repeat(200),
    '😀'.repeat(201),
    'a\u200bb',
    5,
    null,
  ],
  description: [
    '',
    'line\nline',
    '<img src=x onerror=alert(1)>',
    'd'.repeat(10_000),
    'd'.repeat(10_001),
    'bell\u0007',
    '\u001b[2J',
    0,
    null,
  ],
  status: ['open', 'in_progress', 'done', 'DONE', '', null, 1],
  priority: ['low', 'normal', 'high', 'urgent', 'none', null],
  dueDate: [
    null,
    '2026-02-28',
    '2026-02-29',
    '2024-02-29',
    '9999-12-31',
    '0001-01-01',
    '0000-01-01',
    '2026-04-31',
    '2026-13-01',
    '2026-1-1',
    '2026-01-01T00:00:00Z',
    '２０２６-01-01',
    20260101,
  ],
  assigneeId: [null, 1, 2, 3, 4, 999, 0, '2', 2.5, -1],
  version: [1, 2],
  id: [1],
  extra: ['x'],
};

function fields(random: Random, names: readonly string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of names) if (random.chance(0.45)) body[name] = random.pick(VALUES[name]!);
  if (random.chance(0.05)) body[random.pick(['version', 'id', 'extra', 'createdBy'])] = 1;
  return body;
}

const WRITABLE = ['clientId', 'title', 'description', 'status', 'priority', 'dueDate', 'assigneeId'];

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  describe(`task and client bodies (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it(`hold over ${RUNS} seeded requests (seed ${SEED})`, async (t) => {
      const testApp = await createTestApp({
        database: kind,
        env: { RATE_LIMIT_AUTHENTICATED: '1000000/15m' },
      });
      t.after(testApp.close);
      const alice = testApp.client();
      await alice.login('alice@example.com');
      const admin = testApp.client();
      await admin.login('admin@example.com');
      const random = new Random(SEED);
      const etags = new Map<number, string>();
      const problems: string[] = [];
      const statuses = new Map<string, number>();

      const call = async (
        client: TestClient,
        method: 'POST' | 'PATCH',
        url: string,
        body: unknown,
        headers = {},
      ) => {
        const payload = random.chance(0.03) ? '{"title": "cut' : JSON.stringify(body);
        const response = await client.request({
          method,
          url,
          payload,
          headers: { 'content-type': 'application/json', ...headers },
        });
        const code = response.statusCode >= 400 ? response.json<{ code?: string }>().code : '-';
        const key = `${method} ${url.split('/')[3]} ${response.statusCode} ${code}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (response.statusCode >= 500)
          problems.push(`${method} ${url} ${payload.slice(0, 120)}: ${response.statusCode} ${response.body}`);
        if (response.statusCode >= 400 && typeof code !== 'string')
          problems.push(`${method} ${url}: ${response.statusCode} without a code`);
        return response;
      };

      for (let i = 0; i < RUNS; i++) {
        const roll = random.next();
        if (roll < 0.3) {
          const body = { clientId: random.pick([1, 2, 3]), title: 'Task', ...fields(random, WRITABLE) };
          const headers = random.chance(0.2) ? { 'idempotency-key': `k-${random.int(1, 20)}` } : {};
          const response = await call(alice, 'POST', '/api/employee/tasks', body, headers);
          if (response.statusCode === 201) {
            const { task } = response.json<{ task: { id: number } }>();
            etags.set(task.id, String(response.headers.etag));
          }
        } else if (roll < 0.8) {
          const id = random.chance(0.9) ? random.int(1, 30) : random.pick([0, 99_999, 2_147_483_648]);
          const tag = random.pick([
            'current',
            'current',
            '*',
            '"v1"',
            'W/"v2"',
            'none',
            '"v99999999999"',
            'junk',
          ]);
          const ifMatch = tag === 'current' ? (etags.get(id) ?? '"v1"') : tag;
          const headers = ifMatch === 'none' ? {} : { 'if-match': ifMatch };
          const response = await call(
            alice,
            'PATCH',
            `/api/employee/tasks/${id}`,
            fields(random, WRITABLE),
            headers,
          );
          if (response.statusCode === 200 || response.statusCode === 412) {
            const { task } = response.json<{ task: { id: number; version: number } }>();
            etags.set(task.id, `"v${task.version}"`);
          }
        } else if (roll < 0.85) {
          await call(alice, 'PATCH', '/api/employee/tasks/bulk', {
            taskIds: [random.int(1, 30), random.int(1, 30)],
            assigneeId: random.pick([1, 2, 3, 4]),
          });
          etags.clear();
        } else {
          const body = random.chance(0.8)
            ? { name: random.pick(VALUES.title!) }
            : fields(random, ['extra', 'id']);
          if (random.chance(0.5)) await call(admin, 'POST', '/api/admin/clients', body);
          else await call(admin, 'PATCH', `/api/admin/clients/${random.int(1, 8)}`, body);
        }
      }

      const { db } = testApp.database;
      const astray = await db.query<{ id: number }>(
        `SELECT t.id FROM tasks t
          WHERE t.version <> (SELECT count(*) FROM task_history h WHERE h.task_id = t.id)
                             + CASE WHEN t.created_by IS NULL THEN 1 ELSE 0 END`,
      );
      for (const { id } of astray) problems.push(`task ${id}: its version and its history disagree`);
      const broken = await db.query<{ id: number }>(
        `SELECT id FROM tasks
          WHERE title <> btrim(title) OR char_length(title) NOT BETWEEN 1 AND 200 OR title ~ '[[:cntrl:]]'
             OR char_length(description) > 10000`,
      );
      for (const { id } of broken) problems.push(`task ${id} breaks the field rules`);
      const clients = await db.query<{ name: string }>(
        'SELECT name FROM clients WHERE name <> btrim(name) OR char_length(name) NOT BETWEEN 1 AND 200',
      );
      for (const { name } of clients) problems.push(`client ${JSON.stringify(name)} breaks the name rules`);
      const table = [...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ×${n}`);
      t.diagnostic(`seed ${SEED}: ${table.join(', ')}`);
      assert.deepEqual(problems.slice(0, 20), [], `${problems.length} problems (first 20 shown)`);
      // The run reached the work itself, not only its refusals.
      for (const wanted of [
        'POST tasks 201 -',
        'PATCH tasks 200 -',
        'PATCH tasks 412 TASK_CHANGED',
        'PATCH tasks 428 PRECONDITION_REQUIRED',
      ])
        assert.ok(statuses.has(wanted), `the run met ${wanted}`);
    });
  });
}
