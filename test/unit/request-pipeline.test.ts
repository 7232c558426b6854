// The request pipeline: one onRequest hook per route running its steps in order, waiting where a step waits.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import Fastify from 'fastify';
import { ANSWERED, type RequestStep, requestPipelinePlugin } from '../../src/http/request-pipeline.ts';

/** An app whose pipeline has `steps` (each made for every route), one route `/r`, and a 404 handler. */
async function appWith(t: TestContext, steps: ((trail: string[]) => RequestStep)[]) {
  const app = Fastify();
  const trail: string[] = [];
  await app.register(requestPipelinePlugin);
  for (const step of steps) app.requestPipeline.add(() => step(trail));
  app.get('/r', async (request) => {
    trail.push(`handler ${request.routePattern}`);
    return { ok: true };
  });
  app.register(async (unmatched) => {
    unmatched.addHook('onRequest', app.requestPipeline.forUnmatched());
    unmatched.setNotFoundHandler((request, reply) => {
      trail.push(`404 ${request.routePattern}`);
      reply.code(404).send({ missing: true });
    });
  });
  t.after(() => app.close());
  return { app, trail };
}

const mark =
  (name: string): ((trail: string[]) => RequestStep) =>
  (trail) =>
  () => {
    trail.push(name);
    return undefined;
  };

describe('request pipeline', () => {
  it('runs every step in the order added, then the handler, with the route pattern set', async (t) => {
    const { app, trail } = await appWith(t, [mark('a'), mark('b'), mark('c')]);
    assert.equal((await app.inject('/r')).statusCode, 200);
    assert.deepEqual(trail, ['a', 'b', 'c', 'handler /r']);
  });

  it('waits for a step that returns a promise before the next one', async (t) => {
    const slow =
      (trail: string[]): RequestStep =>
      () =>
        new Promise((resolve) =>
          setImmediate(() => {
            trail.push('slow');
            resolve(undefined);
          }),
        );
    const { app, trail } = await appWith(t, [mark('a'), slow, mark('c')]);
    assert.equal((await app.inject('/r')).statusCode, 200);
    assert.deepEqual(trail, ['a', 'slow', 'c', 'handler /r']);
  });

  it('stops at a step that answered, at once or once its promise settles', async (t) => {
    for (const late of [false, true]) {
      const answer =
        (trail: string[]): RequestStep =>
        (_request, reply) => {
          trail.push('answer');
          const send = (): typeof ANSWERED => {
            reply.code(429).send({ refused: true });
            return ANSWERED;
          };
          return late ? Promise.resolve().then(send) : send();
        };
      const { app, trail } = await appWith(t, [mark('a'), answer, mark('never')]);
      const response = await app.inject('/r');
      assert.equal(response.statusCode, 429, `late: ${late}`);
      assert.deepEqual(trail, ['a', 'answer'], `late: ${late}`);
    }
  });

  it('hands a step that throws, or whose promise rejects, to the error handler', async (t) => {
    for (const late of [false, true]) {
      const fail = (): RequestStep => () => {
        const error = Object.assign(new Error('step failed'), { statusCode: 503 });
        if (late) return Promise.reject(error);
        throw error;
      };
      const { app, trail } = await appWith(t, [fail, mark('never')]);
      const response = await app.inject('/r');
      assert.equal(response.statusCode, 503, `late: ${late}`);
      assert.deepEqual(trail, [], `late: ${late}`);
    }
  });

  it('gives requests that match no route the same steps, with no route pattern', async (t) => {
    const { app, trail } = await appWith(t, [mark('a'), mark('b')]);
    assert.equal((await app.inject('/nowhere')).statusCode, 404);
    assert.deepEqual(trail, ['a', 'b', '404 null']);
  });

  it('makes each route’s steps for that route, and refuses a step added once requests were served', async (t) => {
    const app = Fastify();
    await app.register(requestPipelinePlugin);
    const seen: (string | null)[] = [];
    app.requestPipeline.add((route) => {
      seen.push(route?.url ?? null);
      return route?.url === '/skip' ? null : () => undefined;
    });
    app.get('/r', async () => 'r');
    app.get('/skip', async () => 'skip');
    t.after(() => app.close());
    await app.inject('/r');
    await app.inject('/r');
    await app.inject('/skip');
    // Made once per route (a GET's HEAD twin is a route of its own), at its first request.
    assert.deepEqual(seen, ['/r', '/skip']);
    assert.throws(() => app.requestPipeline.add(() => null), /after requests were served/);
  });
});
