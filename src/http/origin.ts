// The service's own origin as a browser sees it (docs/rules.md#authentication-and-csrf).
import type { FastifyRequest } from 'fastify';
import { type RelyingParty, relyingParty } from '../auth/passkeys.ts';
import type { Config } from '../config.ts';

/**
 * The origin browsers use for this service, normalized as URLs do (`http://host:80` is
 * `http://host`), or null when the request names no usable host.
 *
 * PUBLIC_ORIGIN wins when set (validated by config.ts). Otherwise the origin comes from the request:
 * Fastify's `request.protocol` and `request.host` read `X-Forwarded-Proto` and `X-Forwarded-Host`
 * only when the socket's peer is a trusted proxy (TRUST_PROXY, handed to Fastify's `trustProxy` in
 * app.ts), else the socket's TLS and the `Host` header; `request.host` keeps the port, which a
 * browser's `Origin` carries too. The CSRF check, the cookies' `Secure` flag and WebAuthn's expected
 * origin and RP ID (its `hostname`) all read this one function.
 */
export function ownOrigin(request: FastifyRequest, config: Pick<Config, 'publicOrigin'>): string | null {
  if (config.publicOrigin !== null) return config.publicOrigin;
  const host = request.host;
  // A host with a path, query or credentials in it is no host: the URL parser would accept some.
  if (!host || /[/?#@\\\s]/.test(host)) return null;
  try {
    const origin = new URL(`${request.protocol}://${host}`).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** True when the browser reaches this service over HTTPS (directly, behind a trusted TLS proxy, or PUBLIC_ORIGIN's). */
export function servedOverHttps(request: FastifyRequest, config: Pick<Config, 'publicOrigin'>): boolean {
  return config.publicOrigin !== null
    ? config.publicOrigin.startsWith('https:')
    : request.protocol === 'https';
}

/**
 * The relying party a request speaks to: the service's own origin (ownOrigin) and its host as RP
 * ID; null when the request names no usable host.
 */
export function relyingPartyOf(
  request: FastifyRequest,
  config: Pick<Config, 'publicOrigin'>,
): RelyingParty | null {
  const origin = ownOrigin(request, config);
  return origin === null ? null : relyingParty(origin);
}
