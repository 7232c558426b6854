// The cookies plugin on a bare Fastify app: request.cookies parsed on first read, reply.setCookie and reply.clearCookie.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { cookiesPlugin } from '../../src/http/plugins/cookies.ts';

type Handler = (request: FastifyRequest, reply: FastifyReply) => unknown;

/** A bare app with the plugin and one GET / route (no logger, no other plugin of the portal). */
async function appWith(t: TestContext, handler: Handler) {
  const app = Fastify();
  await app.register(cookiesPlugin);
  app.get('/', async (request, reply) => handler(request, reply));
  await app.ready();
  t.after(() => app.close());
  return app;
}

/** What GET / answers with this Cookie header (none when undefined). */
async function get(t: TestContext, handler: Handler, cookie?: string) {
  const app = await appWith(t, handler);
  return app.inject({ method: 'GET', url: '/', headers: cookie === undefined ? {} : { cookie } });
}

/** The Set-Cookie lines of a response, in order. */
function setCookies(response: { headers: Record<string, unknown> }): string[] {
  const header = response.headers['set-cookie'];
  if (header === undefined) return [];
  return Array.isArray(header) ? header : [String(header)];
}

const echoCookies: Handler = (request) => ({ ...request.cookies });

describe('request.cookies', () => {
  it('parses every cookie of the Cookie header by name, URL-decoding the values', async (t) => {
    const response = await get(t, echoCookies, 'tp_session=abc.def; tp_csrf=x1;theme=dark%20blue ;  empty=');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), {
      tp_session: 'abc.def',
      tp_csrf: 'x1',
      theme: 'dark blue',
      empty: '',
    });
  });

  it('keeps the first of a repeated name, as the cookie package does', async (t) => {
    const response = await get(t, echoCookies, 'a=first; b=2; a=second');
    assert.deepEqual(response.json(), { a: 'first', b: '2' });
  });

  it('is {} without a Cookie header, and for an empty one', async (t) => {
    assert.deepEqual((await get(t, echoCookies)).json(), {});
    assert.deepEqual((await get(t, echoCookies, '')).json(), {});
  });

  it('never throws on a malformed header: pairs without "=" are skipped, bad escapes kept as sent', async (t) => {
    // Expected as JSON text: an own "__proto__" key cannot be written as an object literal.
    for (const [header, expected] of [
      ['garbage', '{}'],
      ['x', '{}'],
      [';;;', '{}'],
      ['=;=', '{"":""}'],
      ['a=%E0%A4%A; b; c=%zz', '{"a":"%E0%A4%A","c":"%zz"}'],
      ['a="quoted"; b==c', '{"a":"\\"quoted\\"","b":"=c"}'],
      ['__proto__=1; constructor=2', '{"__proto__":"1","constructor":"2"}'],
    ] as const) {
      const response = await get(t, echoCookies, header);
      assert.equal(response.statusCode, 200, header);
      assert.deepEqual(response.json(), JSON.parse(expected), header);
    }
  });

  it('is parsed on first read and kept: later changes to the header are not seen', async (t) => {
    const response = await get(t, (request) => {
      request.headers.cookie = 'late=1'; // before the first read: this is what gets parsed
      const first = request.cookies;
      request.headers.cookie = 'later=2';
      return { first: { ...first }, again: { ...request.cookies }, same: first === request.cookies };
    });
    assert.deepEqual(response.json(), { first: { late: '1' }, again: { late: '1' }, same: true });
  });

  it("is each request's own: a parse is never shared with the next request", async (t) => {
    const app = await appWith(t, echoCookies);
    const first = await app.inject({ url: '/', headers: { cookie: 'who=first' } });
    const second = await app.inject({ url: '/', headers: { cookie: 'who=second' } });
    const none = await app.inject({ url: '/' });
    assert.deepEqual([first.json(), second.json(), none.json()], [{ who: 'first' }, { who: 'second' }, {}]);
  });

  it('reads a name like an Object.prototype member as absent, with or without a Cookie header', async (t) => {
    const handler: Handler = (request) =>
      ['constructor', 'toString', '__proto__'].map((name) => typeof request.cookies[name]);
    assert.deepEqual((await get(t, handler, 'a=1')).json(), ['undefined', 'undefined', 'undefined']);
    assert.deepEqual((await get(t, handler)).json(), ['undefined', 'undefined', 'undefined']);
  });
});

describe('reply.setCookie', () => {
  it('writes one Set-Cookie line, SameSite=Lax by default', async (t) => {
    const response = await get(t, (_request, reply) => reply.setCookie('a', '1', { path: '/' }).send('ok'));
    assert.equal(response.statusCode, 200);
    assert.deepEqual(setCookies(response), ['a=1; Path=/; SameSite=Lax']);
  });

  it('serialises HttpOnly, Secure, SameSite=Strict, Domain, Path and Max-Age', async (t) => {
    const response = await get(t, (_request, reply) =>
      reply
        .setCookie('tp_device', 'v.1', {
          path: '/api/auth',
          domain: 'portal.example.com',
          httpOnly: true,
          secure: true,
          sameSite: 'strict',
          maxAge: 15_552_000,
        })
        .send('ok'),
    );
    assert.deepEqual(setCookies(response), [
      'tp_device=v.1; Max-Age=15552000; Domain=portal.example.com; Path=/api/auth; HttpOnly; Secure; SameSite=Strict',
    ]);
    const [cookie] = response.cookies as { name: string; value: string; sameSite?: string }[];
    assert.equal(cookie?.sameSite, 'Strict', 'a client reads the attributes back');
  });

  it('keeps an explicit SameSite=None', async (t) => {
    const response = await get(t, (_request, reply) =>
      reply.setCookie('a', '1', { path: '/', sameSite: 'none', secure: true }).send('ok'),
    );
    assert.deepEqual(setCookies(response), ['a=1; Path=/; Secure; SameSite=None']);
  });

  it('URL-encodes a value the Cookie syntax cannot carry, and request.cookies decodes it back', async (t) => {
    const value = 'a b;c,"d"\\é%';
    const app = await appWith(t, (request, reply) => {
      if (request.cookies.v !== undefined) return { v: request.cookies.v };
      return reply.setCookie('v', value, { path: '/' }).send('set');
    });
    const set = await app.inject({ url: '/' });
    const [line] = setCookies(set);
    assert.equal(line, `v=${encodeURIComponent(value)}; Path=/; SameSite=Lax`);
    const pair = line!.split(';')[0]!;
    assert.deepEqual((await app.inject({ url: '/', headers: { cookie: pair } })).json(), { v: value });
  });

  it('set twice with the same name and path in one reply: one line, the last', async (t) => {
    const response = await get(t, (_request, reply) => {
      reply.setCookie('a', 'first', { path: '/', httpOnly: true });
      reply.setCookie('a', 'last', { path: '/', maxAge: 60 });
      return reply.send('ok');
    });
    assert.deepEqual(setCookies(response), ['a=last; Max-Age=60; Path=/; SameSite=Lax']);
  });

  it('two different cookies: two lines, in the order they were set', async (t) => {
    const response = await get(t, (_request, reply) => {
      reply.setCookie('tp_session', 's', { path: '/', httpOnly: true });
      reply.setCookie('tp_device', 'd', { path: '/api/auth', httpOnly: true, sameSite: 'strict' });
      return reply.send('ok');
    });
    assert.deepEqual(setCookies(response), [
      'tp_session=s; Path=/; HttpOnly; SameSite=Lax',
      'tp_device=d; Path=/api/auth; HttpOnly; SameSite=Strict',
    ]);
  });

  it('the same name at another path or domain is another cookie: both lines stay', async (t) => {
    const response = await get(t, (_request, reply) => {
      reply.setCookie('a', '1', { path: '/' });
      reply.setCookie('a', '2', { path: '/api' });
      reply.setCookie('a', '3', { path: '/', domain: 'example.com' });
      reply.setCookie('a', '4', { path: '/api' }); // replaces the second, in its place
      return reply.send('ok');
    });
    assert.deepEqual(setCookies(response), [
      'a=1; Path=/; SameSite=Lax',
      'a=4; Path=/api; SameSite=Lax',
      'a=3; Domain=example.com; Path=/; SameSite=Lax',
    ]);
  });

  it('keeps the lines on an error answer sent after them', async (t) => {
    const response = await get(t, (_request, reply) => {
      reply.setCookie('a', '1', { path: '/' });
      throw new Error('boom');
    });
    assert.equal(response.statusCode, 500);
    assert.deepEqual(setCookies(response), ['a=1; Path=/; SameSite=Lax']);
  });

  it('throws TypeError for a name the Cookie syntax does not allow, writing nothing', async (t) => {
    const response = await get(t, (_request, reply) => {
      assert.throws(() => reply.setCookie('bad name', '1', { path: '/' }), TypeError);
      assert.throws(() => reply.setCookie('a;b', '1', { path: '/' }), TypeError);
      return reply.send('ok');
    });
    assert.deepEqual(setCookies(response), []);
  });

  it('a reply that sets no cookie has no Set-Cookie header', async (t) => {
    const response = await get(t, (_request, reply) => reply.send('ok'), 'a=1');
    assert.equal(response.headers['set-cookie'], undefined);
  });

  it('keeps a Set-Cookie header written with reply.header before it', async (t) => {
    const response = await get(t, (_request, reply) => {
      reply.header('set-cookie', 'other=1; Path=/');
      reply.setCookie('a', '1', { path: '/' });
      return reply.send('ok');
    });
    assert.deepEqual(setCookies(response), ['other=1; Path=/', 'a=1; Path=/; SameSite=Lax']);
  });
});

describe('reply.clearCookie', () => {
  it('writes an empty value with Max-Age=0 and an Expires in 1970', async (t) => {
    const response = await get(t, (_request, reply) =>
      reply.clearCookie('tp_session', { path: '/', httpOnly: true }).send('ok'),
    );
    assert.deepEqual(setCookies(response), [
      'tp_session=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax',
    ]);
    const [cookie] = response.cookies as { value: string; maxAge?: number; expires?: Date }[];
    assert.equal(cookie?.value, '');
    assert.equal(cookie?.maxAge, 0);
    assert.equal(cookie?.expires?.getTime(), 0);
  });

  it('overrides a Max-Age or Expires given in its options', async (t) => {
    const response = await get(t, (_request, reply) =>
      reply.clearCookie('a', { path: '/', maxAge: 3600, expires: new Date(Date.UTC(2099, 0, 1)) }).send('ok'),
    );
    assert.deepEqual(setCookies(response), [
      'a=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; SameSite=Lax',
    ]);
  });

  it('replaces a setCookie of the same name and path in the same reply, and leaves other paths alone', async (t) => {
    const response = await get(t, (_request, reply) => {
      reply.setCookie('a', '1', { path: '/' });
      reply.setCookie('a', '2', { path: '/api' });
      reply.clearCookie('a', { path: '/' });
      return reply.send('ok');
    });
    assert.deepEqual(setCookies(response), [
      'a=; Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; SameSite=Lax',
      'a=2; Path=/api; SameSite=Lax',
    ]);
  });
});
