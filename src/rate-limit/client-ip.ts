// Works out the client address a request is keyed by: socket peer, trusted proxies, IPv6 prefix.
import { BlockList, isIP } from 'node:net';

/** Which peers may tell us the client address through X-Forwarded-For. */
export type TrustProxy =
  | { readonly kind: 'none' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'list'; readonly list: BlockList; readonly text: string };

/** Parses TRUST_PROXY: empty → trust none; an integer → that many proxy hops; else addresses/CIDRs. */
export function parseTrustProxy(text: string): TrustProxy | null {
  const value = text.trim();
  if (value === '' || value === 'false' || value === '0') return { kind: 'none' };
  if (/^\d+$/.test(value)) return Number(value) <= 32 ? { kind: 'hops', hops: Number(value) } : null;
  const list = new BlockList();
  for (const part of value.split(',')) {
    const [address, bits, extra] = part.trim().split('/');
    const family = isIP(address ?? '');
    if (!family || extra !== undefined) return null;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(address!, type);
      continue;
    }
    const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
    if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) return null;
    list.addSubnet(address!, prefix, type);
  }
  return { kind: 'list', list, text: value };
}

/**
 * The address of the client: the socket peer, unless the peer is a trusted proxy, in which case
 * the forwarding chain is walked from the right (the only end a client cannot forge).
 */
export function clientAddress(
  socketAddress: string | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  trust: TrustProxy,
): string {
  const peer = unmapIPv4(socketAddress ?? '');
  if (trust.kind === 'none') return peer;
  const forwarded = forwardedChain(headers);
  if (forwarded.length === 0) return peer;
  // chain[0] is our peer, chain[1] the hop before it, and so on towards the client.
  const chain = [peer, ...forwarded.reverse()];
  if (trust.kind === 'hops') return chain[Math.min(trust.hops, chain.length - 1)]!;
  let index = 0;
  while (index < chain.length - 1 && isTrusted(chain[index]!, trust.list)) index++;
  return chain[index]!;
}

/** The rate-limit key of an address: IPv4 as is, IPv6 masked to its `/prefix` network. */
export function addressKey(address: string, ipv6Prefix: number): string {
  if (isIP(address) !== 6) return address;
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

function isTrusted(address: string, list: BlockList): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** `::ffff:192.0.2.1` → `192.0.2.1`, so an IPv4 client is keyed alone and not as part of ::ffff:0:0/96. */
export function unmapIPv4(address: string): string {
  const match = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return match ? match[1]! : address;
}

/**
 * The addresses of X-Forwarded-For, left to right. Only this header is read: the proxies people
 * run (nginx `proxy_add_x_forwarded_for`, cloud load balancers) append to it, while they pass a
 * client's own `Forwarded` header through untouched, so reading `Forwarded` would let a client
 * behind a trusted proxy choose its address (and its rate-limit key).
 */
function forwardedChain(headers: Readonly<Record<string, string | string[] | undefined>>): string[] {
  const xff = joinHeader(headers['x-forwarded-for']);
  return xff ? xff.split(',').map((part) => normalise(part)) : [];
}

function normalise(candidate: string): string {
  const trimmed = candidate.trim();
  // Strip a port from `a.b.c.d:port`; IPv6 carries no port in X-Forwarded-For.
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(trimmed);
  const address = unmapIPv4(v4WithPort ? v4WithPort[1]! : trimmed);
  // Anything that is not an address (`unknown`, garbage) is kept as an opaque token that no
  // trusted-proxy list matches, so the walk stops there.
  return isIP(address) ? address.toLowerCase() : `invalid:${address.slice(0, 64)}`;
}

function joinHeader(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(',') : (value ?? '');
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
