// POST and PATCH /api/admin/clients (docs/rules.md#tasks): admins add and rename clients, names unique
// ignoring case, on embedded and PostgreSQL.
import assert from 'node:assert/strict';
import { after, describe, it, type TestContext } from 'node:test';
import { createTestApp, type TestApp, type TestClient } from '../helpers/app.ts';
import { closeTestDatabases, type DatabaseKind } from '../helpers/database.ts';
import { assertError } from '../helpers/http.ts';
import { skipUnless } from '../helpers/services.ts';

after(closeTestDatabases);

const skipPostgres = await skipUnless('postgres');
const CLIENTS = '/api/admin/clients';

const send = (client: TestClient, method: 'POST' | 'PATCH', url: string, body: unknown) =>
  client.request({
    method,
    url,
    payload: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });

for (const kind of ['embedded', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  const signedIn = async (t: TestContext): Promise<TestApp & { admin: TestClient; alice: TestClient }> => {
    const testApp = await createTestApp({ database: kind });
    t.after(testApp.close);
    const admin = testApp.client();
    await admin.login('admin@example.com');
    const alice = testApp.client();
    await alice.login('alice@example.com');
    return { ...testApp, admin, alice };
  };
  const names = async (client: TestClient) =>
    (await client.get('/api/employee/clients'))
      .json<{ clients: { name: string }[] }>()
      .clients.map((c) => c.name);

  describe(`admin clients (${kind})`, { skip: kind === 'postgres' && skipPostgres }, () => {
    it('adds a client, trimmed, and lists it; tasks can then be created for it', async (t) => {
      const { admin, alice } = await signedIn(t);
      const response = await send(admin, 'POST', CLIENTS, { name: '  Umbrella Corp  ' });
      assert.equal(response.statusCode, 201, response.body);
      const { client } = response.json<{ client: { id: number; name: string } }>();
      assert.equal(client.name, 'Umbrella Corp');
      assert.ok((await names(alice)).includes('Umbrella Corp'));
      const task = await send(alice, 'POST', '/api/employee/tasks', {
        clientId: client.id,
        title: 'Kick-off',
      });
      assert.equal(task.statusCode, 201);
    });

    it('answers 409 CLIENT_NAME_TAKEN to a name another client has, ignoring case, on add and rename', async (t) => {
      const { admin } = await signedIn(t);
      assertError(await send(admin, 'POST', CLIENTS, { name: 'INITECH' }), 409, 'CLIENT_NAME_TAKEN');
      assertError(await send(admin, 'POST', CLIENTS, { name: ' initech ' }), 409, 'CLIENT_NAME_TAKEN');
      assertError(
        await send(admin, 'PATCH', `${CLIENTS}/1`, { name: 'globex corporation' }),
        409,
        'CLIENT_NAME_TAKEN',
      );
      // A client may change the case of its own name.
      const own = await send(admin, 'PATCH', `${CLIENTS}/3`, { name: 'INITECH' });
      assert.equal(own.statusCode, 200, own.body);
      assert.deepEqual(own.json(), { client: { id: 3, name: 'INITECH' } });
    });

    it('lets one of many adds racing with one name win', async (t) => {
      const { admin } = await signedIn(t);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          send(admin, 'POST', CLIENTS, { name: i % 2 ? 'Hooli' : 'hooli' }),
        ),
      );
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
    });

    it('renames; 404 for an unknown client; 400 naming the field for a bad name', async (t) => {
      const { admin, alice } = await signedIn(t);
      const renamed = await send(admin, 'PATCH', `${CLIENTS}/2`, { name: 'Globex Ltd' });
      assert.equal(renamed.statusCode, 200);
      assert.ok((await names(alice)).includes('Globex Ltd'));
      assertError(await send(admin, 'PATCH', `${CLIENTS}/999`, { name: 'Nobody' }), 404, 'NOT_FOUND');
      for (const body of [
        { name: '   ' },
        { name: 'x'.repeat(201) },
        { name: 'tab\there' },
        { name: 5 },
        {},
        { name: 'a', extra: 1 },
      ]) {
        const error = assertError(await send(admin, 'POST', CLIENTS, body), 400, 'VALIDATION_ERROR');
        assert.match(JSON.stringify(error), /name|extra/);
      }
    });

    it('is for admins only', async (t) => {
      const { alice } = await signedIn(t);
      assertError(await send(alice, 'POST', CLIENTS, { name: 'Mine' }), 403, 'FORBIDDEN');
      assertError(await send(alice, 'PATCH', `${CLIENTS}/1`, { name: 'Mine' }), 403, 'FORBIDDEN');
    });
  });
}
