// Route schemas are compiled on a route's first use (src/http/deferred-compilation.ts), and every one of them
// compiles.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';

after(closeTestDatabases);

describe('route schemas', () => {
  it('are compiled when a route first needs them, each once, and all of them compile', async (t) => {
    const { app, client, close } = await createTestApp();
    t.after(close);
    const compilations = app.schemaCompilations;
    const atStart = compilations.waiting;
    assert.ok(atStart > 100, `${atStart} validators and serializers wait for their route`);
    const alice = client();
    assert.equal((await alice.login('alice@example.com')).statusCode, 200);
    const tasks = await alice.get('/api/employee/tasks?limit=2');
    assert.equal(tasks.statusCode, 200);
    const afterUse = compilations.waiting;
    assert.ok(afterUse < atStart, 'the routes used compiled theirs');
    assert.equal((await alice.get('/api/employee/tasks?limit=1')).statusCode, 200);
    assert.equal(compilations.waiting, afterUse, 'once');
    // Whatever no request reached yet compiles too, as the start compiled everything before.
    compilations.compileAll();
    assert.equal(compilations.waiting, 0);
    // Validation still refuses what it refused: a number out of range, coerced from the query.
    assert.equal((await alice.get('/api/employee/tasks?limit=0')).statusCode, 400);
  });
});
