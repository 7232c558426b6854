// DeferredChildLogger: a request's logger is pino's own child, made on the first line, never before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { DeferredChildLogger, deferChildLoggers } from '../../src/http/request-logger.ts';

/** A destination that keeps every line, parsed, without the time. */
class Capture {
  readonly lines: Record<string, unknown>[] = [];
  write(line: string): void {
    const { time: _time, ...rest } = JSON.parse(line);
    this.lines.push(rest);
  }
}

function rootLogger(level = 'trace') {
  const out = new Capture();
  return { out, root: pino({ level, base: { pid: 1, hostname: 'h' } }, out) };
}

describe('DeferredChildLogger', () => {
  it('makes no child until a line is logged, and only one then', (t) => {
    const { root } = rootLogger();
    const child = t.mock.method(root, 'child');
    const logger = new DeferredChildLogger(root, { reqId: 'r-1' }, {});
    assert.equal(child.mock.callCount(), 0);
    logger.info('one');
    logger.warn('two');
    assert.equal(child.mock.callCount(), 1);
    assert.deepEqual(child.mock.calls[0]!.arguments, [{ reqId: 'r-1' }, {}]);
  });

  it('writes, at every level, the very lines pino writes through a child with the same bindings', () => {
    const deferred = rootLogger();
    const direct = rootLogger();
    const logger: FastifyBaseLogger = new DeferredChildLogger(deferred.root, { reqId: 'r-2' }, {});
    const child = direct.root.child({ reqId: 'r-2' });
    for (const target of [logger, child]) {
      target.fatal('fatal line');
      target.error({ err: new Error('boom'), code: 'E' }, 'error line');
      target.warn({ n: 1 }, 'warn %s', 'formatted');
      target.info('info line');
      target.debug({ deep: { a: [1, 2] } }, 'debug line');
      target.trace('trace line');
      target.silent('never written');
    }
    const withoutStacks = (lines: Record<string, unknown>[]) =>
      lines.map((line) => JSON.stringify(line).replace(/"stack":"[^"]*"/, '"stack":""'));
    assert.equal(deferred.out.lines.length, 6);
    assert.deepEqual(withoutStacks(deferred.out.lines), withoutStacks(direct.out.lines));
  });

  it('honours a route level, reads and sets its level, and makes grandchildren with both bindings', () => {
    const { out, root } = rootLogger('info');
    const logger = new DeferredChildLogger(root, { reqId: 'r-3' }, { level: 'warn' });
    assert.equal(logger.level, 'warn');
    logger.info('dropped at warn');
    logger.level = 'debug';
    logger.debug('kept at debug');
    logger.child({ step: 'inner' }).info('from a grandchild');
    assert.deepEqual(
      out.lines.map(({ msg, reqId, step }) => ({ msg, reqId, step })),
      [
        { msg: 'kept at debug', reqId: 'r-3', step: undefined },
        { msg: 'from a grandchild', reqId: 'r-3', step: 'inner' },
      ],
    );
  });

  it("is each request's logger in Fastify: lines through request.log carry the request id", async () => {
    const { out, root } = rootLogger('info');
    const app = Fastify({
      loggerInstance: root,
      disableRequestLogging: true,
      genReqId: () => 'req-42',
    });
    deferChildLoggers(app as unknown as Pick<FastifyInstance, 'log'>);
    app.get('/', async (request) => {
      assert.ok(request.log instanceof DeferredChildLogger);
      request.log.info({ step: 'handler' }, 'handled');
      return 'ok';
    });
    app.get('/quiet', { logLevel: 'error' }, async (request) => {
      request.log.warn('below the route level');
      return 'ok';
    });
    try {
      assert.equal((await app.inject('/')).statusCode, 200);
      assert.equal((await app.inject('/quiet')).statusCode, 200);
      assert.deepEqual(
        out.lines.filter((line) => line.reqId !== undefined),
        [{ level: 30, pid: 1, hostname: 'h', reqId: 'req-42', step: 'handler', msg: 'handled' }],
      );
    } finally {
      await app.close();
    }
  });
});
