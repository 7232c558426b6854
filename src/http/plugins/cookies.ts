// Cookies in and out: `request.cookies` parsed on first read, `reply.setCookie` and `reply.clearCookie`.
import { parseCookie, type SetCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** The attributes a cookie is set with (name and value apart); SameSite defaults to Lax. */
export type CookieOptions = Omit<SetCookie, 'name' | 'value'>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's cookies by name (the first of a repeated name), parsed when first read. */
    readonly cookies: Readonly<Record<string, string | undefined>>;
  }
  interface FastifyReply {
    /** Adds a Set-Cookie; setting the same name and path again in one answer replaces it. */
    setCookie(name: string, value: string, options: CookieOptions): FastifyReply;
    /** Tells the browser to drop the cookie (same name and path). */
    clearCookie(name: string, options: CookieOptions): FastifyReply;
  }
}

const kParsed = Symbol('cookies.parsed');
const kSetCookies = Symbol('cookies.set');

type WithParsed = FastifyRequest & { [kParsed]: Record<string, string | undefined> | null };
type WithSetCookies = FastifyReply & { [kSetCookies]: Map<string, string> | null };

/**
 * Why not @fastify/cookie: it parses every request's header in a hook of its own and gives every
 * reply a map and an onSend hook, cookies set or not. Here a request that never reads a cookie
 * parses nothing, and only an answer that sets one pays for it. The parsing and the Set-Cookie
 * syntax are still the `cookie` package's.
 */
export const cookiesPlugin = fp(
  async (app) => {
    app.decorateRequest(kParsed, null);
    app.decorateRequest('cookies', {
      getter() {
        const request = this as WithParsed;
        if (request[kParsed] === null) {
          const header = request.headers.cookie;
          // Both without a prototype: a cookie named `constructor` is as absent as any other.
          request[kParsed] = header ? parseCookie(header) : Object.create(null);
        }
        return request[kParsed]!;
      },
    });
    app.decorateReply(kSetCookies, null);
    app.decorateReply('setCookie', function setCookie(name, value, options) {
      return addSetCookie(this as WithSetCookies, name, value, options);
    });
    app.decorateReply('clearCookie', function clearCookie(name, options) {
      return addSetCookie(this as WithSetCookies, name, '', { ...options, expires: new Date(0), maxAge: 0 });
    });
  },
  { name: 'cookies' },
);

function addSetCookie(reply: WithSetCookies, name: string, value: string, options: CookieOptions) {
  const line = stringifySetCookie({ sameSite: 'lax', ...options, name, value });
  reply[kSetCookies] ??= new Map();
  const ours = reply[kSetCookies];
  // Fastify appends to a Set-Cookie header, so the list is written again: lines set by other
  // means stay, and the same name and path set twice in one answer keep only the last.
  const written = new Set(ours.values());
  const current = reply.getHeader('set-cookie');
  const others = (current === undefined ? [] : Array.isArray(current) ? current : [String(current)]).filter(
    (other) => !written.has(other),
  );
  ours.set(`${name};${options.domain ?? ''};${options.path ?? '/'}`, line);
  reply.removeHeader('set-cookie');
  return reply.header('set-cookie', [...others, ...ours.values()]);
}
