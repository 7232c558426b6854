// The portal in Chromium through the shipped nginx on a port other than 80, two instances behind it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { ensurePortalBuilt } from '../../web/build.ts';
import { DEMO_PASSWORD } from '../helpers/app.ts';
import {
  CHROMIUM,
  openBrowser,
  signInAndReassign,
  skipWithoutChromium,
  startPortal,
} from '../helpers/browser.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { skipUnlessNginx, startNginx } from '../helpers/nginx.ts';
import { freePort } from '../helpers/redis-server.ts';

describe('the portal through the shipped nginx', { skip: skipWithoutChromium() || skipUnlessNginx() }, () => {
  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is required (REQUIRE_SERVICES=1) but missing at ${CHROMIUM}`);
    await ensurePortalBuilt({ quiet: true });
  });
  after(closeTestDatabases);

  it('signs in and reassigns tasks with nginx on a port of its own', { timeout: 180_000 }, async (t) => {
    // Two instances on one database, trusting nginx as compose.yaml's do (TRUST_PROXY).
    const env = { TRUST_PROXY: '127.0.0.1' };
    const instances = [await startPortal(t, env), await startPortal(t, env)];
    const port = await freePort();
    const nginx = await startNginx({
      listen: `127.0.0.1:${port}`,
      upstreams: instances.map((base) => new URL(base).host),
    });
    t.after(() => nginx.stop());
    await nginx.listening(port);

    // The browser's Origin is http://127.0.0.1:<port>: the port must reach the CSRF check. The
    // reload after the reassignment reads it back through nginx, on whichever instance it picks.
    const page = await openBrowser(t);
    await signInAndReassign(page, `http://127.0.0.1:${port}`, {
      email: 'alice@example.com',
      password: DEMO_PASSWORD,
      taskIds: [2, 3, 5], // Carol's, Alice's and Carol's
      assignee: 'Bob Nguyen',
    });
    assert.deepEqual(await nginx.errors(), [], "nginx's error log");
  });
});
