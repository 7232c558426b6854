// RequestLogController: the hand-written "request completed" line is the very line pino writes for the same fields.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import fc from 'fast-check';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import { millis, RequestLogController } from '../../src/http/request-log.ts';

const NOW = 1_700_000_000_123;

interface FakeRequest {
  id: string;
  method: string;
  url: string;
  ip: string | undefined;
}
interface FakeReply {
  statusCode: number;
  elapsedTime: number;
}

/** A destination that keeps every line pino (or the controller) hands it. */
class Capture {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  take(): string[] {
    return this.lines.splice(0);
  }
}

const frozen = new WeakSet<TestContext>();

/** A logger on a capturing destination, with Date.now frozen so that both lines carry one time. */
function setup(t: TestContext, options: pino.LoggerOptions = {}, bindings?: pino.Bindings) {
  if (!frozen.has(t)) {
    t.mock.timers.enable({ apis: ['Date'], now: NOW });
    frozen.add(t);
  }
  const out = new Capture();
  const root = pino({ level: 'info', ...options }, out);
  const log: Logger = bindings ? root.child(bindings) : root;
  const controller = new RequestLogController(log);
  return { out, log, controller };
}

function complete(controller: RequestLogController, request: FakeRequest, reply: FakeReply, error?: Error) {
  controller.requestCompleted(
    error ?? null,
    request as unknown as FastifyRequest,
    reply as unknown as FastifyReply,
  );
}

/** The line pino itself writes for the same facts (the response time to the microsecond, see millis). */
function pinoLine(log: Logger, request: FakeRequest, reply: FakeReply): string {
  const out = (log as unknown as Record<symbol, Capture>)[pino.symbols.streamSym]!;
  log.info(
    {
      reqId: request.id,
      method: request.method,
      url: request.url,
      remoteAddress: request.ip,
      statusCode: reply.statusCode,
      responseTime: Number(millis(reply.elapsedTime)),
    },
    'request completed',
  );
  return out.lines.pop()!;
}

/** Hand line and pino's line for one request: both, and what each parses to. */
function both(t: TestContext, request: FakeRequest, reply: FakeReply) {
  const { out, log, controller } = setup(t);
  complete(controller, request, reply);
  const [hand, ...more] = out.take();
  assert.equal(more.length, 0, 'one line per request');
  return { hand: hand!, pino: pinoLine(log, request, reply) };
}

const request: FakeRequest = { id: 'req-1', method: 'GET', url: '/api/tasks?page=2', ip: '198.51.100.7' };
const reply: FakeReply = { statusCode: 200, elapsedTime: 1.234567 };

/** Characters that JSON must escape or that break naive escaping, one code unit or pair each. */
const HOSTILE = [
  '"',
  '\\',
  '\\"',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u2028',
  '\u2029',
  '\ud800', // lone high surrogate
  '\udfff', // lone low surrogate
  '\ufeff',
  '😀',
  'é',
  '</script>',
  '{"level":60}',
  '%s',
];
const hostileUnit = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
  fc.string({ unit: 'binary', maxLength: 3 }),
);
const hostile = fc.string({ unit: hostileUnit, maxLength: 40 });
// Past 100 characters some JSON writers take another path: long strings too.
const hostileOrLong = fc.oneof(hostile, fc.string({ unit: hostileUnit, minLength: 90, maxLength: 200 }));

describe('RequestLogController.requestCompleted', () => {
  it('writes the very line pino writes for the same fields, byte for byte', (t) => {
    const { hand, pino: expected } = both(t, request, reply);
    assert.equal(hand, expected);
    assert.deepEqual(JSON.parse(hand), {
      level: 30,
      time: NOW,
      pid: process.pid,
      hostname: JSON.parse(expected).hostname,
      reqId: 'req-1',
      method: 'GET',
      url: '/api/tasks?page=2',
      remoteAddress: '198.51.100.7',
      statusCode: 200,
      responseTime: 1.235,
      msg: 'request completed',
    });
    assert.ok(hand.endsWith('}\n') && hand.indexOf('\n') === hand.length - 1, 'one line, newline-ended');
  });

  it('keeps the key order of pino: level, time, bindings, the fields, msg', (t) => {
    const { hand } = both(t, request, reply);
    assert.deepEqual(Object.keys(JSON.parse(hand)), [
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'method',
      'url',
      'remoteAddress',
      'statusCode',
      'responseTime',
      'msg',
    ]);
  });

  it('a hostile id, url, method or address still makes one parseable line, equal to pino’s', (t) => {
    fc.assert(
      fc.property(
        hostileOrLong,
        hostileOrLong,
        hostile,
        fc.option(hostile, { nil: undefined }),
        fc.integer({ min: 100, max: 599 }),
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        (id, url, method, ip, statusCode, elapsedTime) => {
          const fake = { id, method, url, ip };
          const { hand, pino: expected } = both(t, fake, { statusCode, elapsedTime });
          assert.equal(hand.indexOf('\n'), hand.length - 1, 'no raw newline inside the line');
          const parsed = JSON.parse(hand);
          assert.deepEqual(parsed, JSON.parse(expected));
          assert.equal(parsed.reqId, id);
          assert.equal(parsed.url, url);
          assert.equal(parsed.method, method);
          assert.equal(parsed.remoteAddress, ip);
          assert.equal(parsed.statusCode, statusCode);
          assert.ok(Math.abs(parsed.responseTime - elapsedTime) <= 0.0005 + 1e-9, 'to the microsecond');
          assert.equal(hand, expected, 'byte for byte');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('one controller, request after request: each line has its own method and address', (t) => {
    const { out, log, controller } = setup(t);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            method: fc.constantFrom('GET', 'POST', 'PATCH', '', 'M"X'),
            ip: fc.option(fc.constantFrom('198.51.100.7', '::1', '', '1"2'), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        (requests) => {
          for (const { method, ip } of requests) {
            const fake = { ...request, method, ip };
            complete(controller, fake, reply);
            const [hand] = out.take();
            assert.equal(hand, pinoLine(log, fake, reply));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves remoteAddress out when the address is unknown, as pino leaves out undefined', (t) => {
    const { hand, pino: expected } = both(t, { ...request, ip: undefined }, reply);
    assert.equal(hand, expected);
    assert.equal('remoteAddress' in JSON.parse(hand), false);
  });

  it('writes response times to the microsecond, with no trailing zeros', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [7, '7'],
      [1.5, '1.5'],
      [1.05, '1.05'],
      [0.0729169845, '0.073'],
      [0.0005, '0.001'],
      [0.000123, '0'],
      [99.9996, '100'],
      [12345.678901234, '12345.679'],
      [1e12, '1000000000000'],
    ];
    for (const [ms, text] of cases) assert.equal(millis(ms), text, String(ms));
    fc.assert(
      fc.property(fc.double({ min: 0, max: 2e6, noNaN: true }), (ms) => {
        const text = millis(ms);
        assert.match(text, /^\d+(\.\d{0,2}[1-9])?$/);
        assert.ok(Math.abs(Number(text) - ms) <= 0.0005 + 1e-9);
      }),
    );
  });

  it('writes whole-number and sub-millisecond response times as pino does', (t) => {
    for (const elapsedTime of [0, 7, 0.000123, 12345.678901234, 1e-7]) {
      const { hand, pino: expected } = both(t, request, { statusCode: 204, elapsedTime });
      assert.equal(hand, expected, String(elapsedTime));
    }
  });

  it('writes nothing when the logger is above info', (t) => {
    for (const level of ['warn', 'error', 'silent']) {
      const { out, controller } = setup(t, { level });
      complete(controller, request, reply);
      assert.deepEqual(out.lines, [], level);
    }
  });

  it("adds a child logger's bindings after pino's own, as the child's own lines have them", (t) => {
    const { out, log, controller } = setup(t, {}, { instance: 'api-"1"', shard: 3 });
    complete(controller, request, reply);
    const [hand] = out.take();
    assert.equal(hand, pinoLine(log, request, reply));
    const parsed = JSON.parse(hand!);
    assert.equal(parsed.instance, 'api-"1"');
    assert.equal(parsed.shard, 3);
    assert.deepEqual(Object.keys(parsed).slice(0, 6), [
      'level',
      'time',
      'pid',
      'hostname',
      'instance',
      'shard',
    ]);
  });

  it('writes to the destination in order with the logger’s other lines', (t) => {
    const { out, log, controller } = setup(t);
    log.info('before');
    complete(controller, request, reply);
    log.warn('after');
    assert.deepEqual(
      out.lines.map((line) => JSON.parse(line).msg),
      ['before', 'request completed', 'after'],
    );
  });

  describe('with an error', () => {
    it('goes through pino at error level with the serialised err, as "request errored"', (t) => {
      const { out, log, controller } = setup(t);
      const error = Object.assign(new Error('boom "quoted"\n'), { code: 'E_TEST' });
      complete(controller, request, { statusCode: 500, elapsedTime: 3.5 }, error);
      const [line, ...more] = out.take();
      assert.equal(more.length, 0);
      log.error(
        {
          reqId: request.id,
          method: request.method,
          url: request.url,
          remoteAddress: request.ip,
          statusCode: 500,
          responseTime: 3.5,
          err: error,
        },
        'request errored',
      );
      assert.equal(line, out.lines.pop(), 'the line pino writes for those fields');
      const parsed = JSON.parse(line!);
      assert.equal(parsed.level, 50);
      assert.equal(parsed.msg, 'request errored');
      assert.equal(parsed.reqId, 'req-1');
      assert.equal(parsed.statusCode, 500);
      assert.equal(parsed.err.type, 'Error');
      assert.equal(parsed.err.message, 'boom "quoted"\n');
      assert.equal(parsed.err.code, 'E_TEST');
      assert.match(parsed.err.stack, /^Error: boom/);
    });

    it('is written when the logger is at warn, and not when it is silent', (t) => {
      const warn = setup(t, { level: 'warn' });
      complete(warn.controller, request, reply, new Error('boom'));
      assert.equal(warn.out.lines.length, 1);
      const silent = setup(t, { level: 'silent' });
      complete(silent.controller, request, reply, new Error('boom'));
      assert.deepEqual(silent.out.lines, []);
    });

    it('a hostile url in an errored line is still parseable', (t) => {
      fc.assert(
        fc.property(hostileOrLong, hostileOrLong, (id, url) => {
          const { out, controller } = setup(t);
          complete(controller, { ...request, id, url }, reply, new Error(url));
          const parsed = JSON.parse(out.lines[0]!);
          assert.equal(parsed.reqId, id);
          assert.equal(parsed.url, url);
          assert.equal(parsed.err.message, url);
        }),
        { numRuns: 100 },
      );
    });
  });
});

describe('RequestLogController.incomingRequest', () => {
  it('writes "incoming request" with the request fields at debug level only', (t) => {
    const info = setup(t);
    info.controller.incomingRequest(request as unknown as FastifyRequest);
    assert.deepEqual(info.out.lines, []);
    const debug = setup(t, { level: 'debug' });
    debug.controller.incomingRequest(request as unknown as FastifyRequest);
    const parsed = JSON.parse(debug.out.lines[0]!);
    assert.equal(parsed.level, 20);
    assert.equal(parsed.msg, 'incoming request');
    assert.deepEqual([parsed.reqId, parsed.method, parsed.url, parsed.remoteAddress], Object.values(request));
  });
});
