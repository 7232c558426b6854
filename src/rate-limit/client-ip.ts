// The client address a request is keyed by: which proxies are trusted (TRUST_PROXY), and IPv6 by prefix.
import { isIP } from 'node:net';

/**
 * Which peers may tell the client address through X-Forwarded-For: none, a hop count, or addresses
 * and CIDRs. app.ts hands it to Fastify's `trustProxy`, whose `request.ip` walks the chain from the
 * right (the only end a client cannot forge).
 */
export type TrustProxy = false | number | readonly string[];

/** Parses TRUST_PROXY: empty → trust none; an integer → that many proxy hops; else addresses/CIDRs. */
export function parseTrustProxy(text: string): TrustProxy | null {
  const value = text.trim();
  if (value === '' || value === 'false' || value === '0') return false;
  if (/^\d+$/.test(value)) return Number(value) <= 32 ? Number(value) : null;
  const parts = value.split(',').map((part) => part.trim());
  // Checked here as Fastify's proxy-addr will read them, so that a bad entry stops the start.
  for (const part of parts) {
    const [address, bits, extra] = part.split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return null;
    if (bits === undefined) continue;
    const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
    if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) return null;
  }
  return Object.freeze(parts);
}

/**
 * The rate-limit key of a client address (Fastify's `request.ip`): IPv4 as is (an IPv4-mapped
 * IPv6 address as its IPv4 address, so that IPv4 clients are not all one ::ffff:0:0/96 network),
 * IPv6 masked to its `/prefix` network, and anything else (a proxy's `unknown`) as an opaque token.
 */
export function addressKey(address: string, ipv6Prefix: number): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const family = isIP(address);
  if (family === 4) return address;
  if (family === 0) return `invalid:${address.slice(0, 64)}`;
  const groups = expandIPv6(address);
  if (!groups) return address;
  let remaining = ipv6Prefix;
  const masked = groups.map((group) => {
    const bits = Math.max(0, Math.min(16, remaining));
    remaining -= 16;
    return bits === 0 ? 0 : group & ((0xffff << (16 - bits)) & 0xffff);
  });
  return `${masked.map((g) => g.toString(16)).join(':')}/${ipv6Prefix}`;
}

function expandIPv6(address: string): number[] | null {
  let text = address.toLowerCase().split('%')[0]!;
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array(zeros).fill('0'), ...right].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}
