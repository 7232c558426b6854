// The demo data (docs/rules.md#running-it): 3 clients, 4 accounts, 200 tasks — only into an empty database.
import { TASK_STATUSES } from '../domain.ts';
import { inTransaction, type Queryable } from './database.ts';

export const DEMO_PASSWORD = 'demo-password';

export const DEMO_ACCOUNTS = [
  { email: 'alice@example.com', name: 'Alice Martin', role: 'employee' },
  { email: 'bob@example.com', name: 'Bob Nguyen', role: 'employee' },
  { email: 'carol@example.com', name: 'Carol Schmidt', role: 'employee' },
  { email: 'admin@example.com', name: 'Ada Admin', role: 'admin' },
] as const;

export const DEMO_CLIENTS = ['Northwind Traders', 'Globex Corporation', 'Initech'];
const CLIENTS = DEMO_CLIENTS;
const WORK = [
  'Review contract',
  'Prepare invoice',
  'Call back about',
  'Update records for',
  'Audit expenses of',
];
export const DEMO_TASK_COUNT = 200;

/**
 * Seeds when the database holds no user; returns whether it did. Run under the schema lock.
 * `hashPassword` is the service's own (auth/passwords.ts): the database layer makes no hashes.
 */
export async function seedDemo(
  db: Queryable,
  hashPassword: (password: string) => Promise<string>,
): Promise<boolean> {
  const [{ count }] = (await db.query<{ count: number }>('SELECT count(*)::int AS count FROM users')) as [
    { count: number },
  ];
  if (count > 0) return false;
  const hashes = await Promise.all(DEMO_ACCOUNTS.map(() => hashPassword(DEMO_PASSWORD)));
  await inTransaction(db, () => insertDemoRows(db, hashes));
  return true;
}

async function insertDemoRows(db: Queryable, hashes: readonly string[]): Promise<void> {
  await db.query('INSERT INTO clients (id, name) SELECT * FROM unnest($1::int[], $2::text[])', [
    CLIENTS.map((_, i) => i + 1),
    CLIENTS,
  ]);
  await db.query(
    'INSERT INTO users (id, email, name, role, password_hash) SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[])',
    [
      DEMO_ACCOUNTS.map((_, i) => i + 1),
      DEMO_ACCOUNTS.map((a) => a.email),
      DEMO_ACCOUNTS.map((a) => a.name),
      DEMO_ACCOUNTS.map((a) => a.role),
      hashes,
    ],
  );
  await resetDemoTasks(db);
  for (const table of ['clients', 'users']) {
    await db.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`);
  }
}

/** (Re)writes the 200 demo tasks: ids 1–200 spread over the clients, the employees and the statuses. */
export async function resetDemoTasks(db: Queryable): Promise<void> {
  const ids = Array.from({ length: DEMO_TASK_COUNT }, (_, i) => i + 1);
  await db.query('DELETE FROM tasks');
  await db.query(
    `INSERT INTO tasks (id, client_id, title, status, assignee_id)
     SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::int[])`,
    [
      ids,
      ids.map((id) => ((id - 1) % CLIENTS.length) + 1),
      ids.map((id) => `${WORK[id % WORK.length]} ${CLIENTS[(id - 1) % CLIENTS.length]} #${id}`),
      ids.map((id) => TASK_STATUSES[id % TASK_STATUSES.length]),
      // Employees are users 1–3; every seventh task starts unassigned.
      ids.map((id) => (id % 7 === 0 ? null : (id % 3) + 1)),
    ],
  );
  await db.query(`SELECT setval(pg_get_serial_sequence('tasks', 'id'), $1)`, [DEMO_TASK_COUNT]);
}
