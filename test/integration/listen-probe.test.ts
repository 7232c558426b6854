// The listening connection is probed: one that died without a word is noticed and opened again.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { POSTGRES_URL, skipUnless } from '../helpers/services.ts';

const skip = await skipUnless('postgres');

/**
 * A TCP relay to PostgreSQL whose live connections can be silenced: nothing passes either way and
 * nothing is closed, as when a host vanishes. Connections made after `silence` pass as usual.
 */
async function silenceableRelay(target: URL) {
  const live = new Set<{ client: net.Socket; server: net.Socket }>();
  const silenced: { client: net.Socket; server: net.Socket }[] = [];
  const relay = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    const pair = { client, server };
    live.add(pair);
    client.pipe(server);
    server.pipe(client);
    const drop = () => {
      live.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', drop).on('close', drop);
    server.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
  return {
    url: url.toString(),
    silence() {
      for (const { client, server } of live) {
        client.unpipe(server);
        server.unpipe(client);
        client.pause();
        server.pause();
      }
      silenced.push(...live);
      live.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const { client, server } of [...silenced, ...live]) {
          client.destroy();
          server.destroy();
        }
        relay.close(() => resolve());
      }),
  };
}

describe('the listening connection (PostgreSQL)', { skip }, () => {
  it('notices a connection that went silent within a probe and a timeout, and listens again', async () => {
    const relay = await silenceableRelay(new URL(POSTGRES_URL));
    const db = await openDatabase({
      databaseUrl: relay.url,
      dataDir: '',
      databaseStatementTimeoutMs: 300,
      listenProbeMs: 100,
    });
    const states: boolean[] = [];
    const changed = (expected: boolean) =>
      new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const look = setInterval(() => {
          if (states.at(-1) === expected) resolve(clearInterval(look));
          else if (Date.now() - started > 5000) reject(new Error(`still ${states.at(-1)} after 5 s`));
        }, 10);
      });
    const listening = await db.listen!('listen_probe_test', { message() {}, state: (s) => states.push(s) });
    after(async () => {
      await listening.close();
      await db.close();
      await relay.close();
    });
    await changed(true);
    relay.silence();
    const silencedAt = Date.now();
    await changed(false);
    // A probe (100 ms) and its timeout (300 ms): well within a second, not the operating system's hours.
    assert.ok(Date.now() - silencedAt < 2000, `noticed after ${Date.now() - silencedAt} ms`);
    await changed(true);
    assert.deepEqual(states, [false, true, false, true]);
  });
});
