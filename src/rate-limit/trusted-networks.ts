// RATE_LIMIT_TRUSTED_NETWORKS: networks the per-address controls leave alone (docs/rules.md#deployment).
import { BlockList, isIP } from 'node:net';

/**
 * Parses RATE_LIMIT_TRUSTED_NETWORKS: a comma list of IPv4/IPv6 addresses and CIDRs; empty means
 * none. Null when an entry is not one (the config names the variable). Each entry is checked the
 * way `trustedNetworkMatcher` will read it, so a list that parses is a list that matches.
 */
export function parseTrustedNetworks(text: string): readonly string[] | null {
  const value = text.trim();
  if (value === '') return Object.freeze([]);
  const parts = value.split(',').map((part) => part.trim());
  try {
    addTo(new BlockList(), parts);
  } catch {
    return null;
  }
  return Object.freeze(parts);
}

/**
 * Whether a client address (Fastify's `request.ip`: the socket's, or the one a trusted proxy
 * forwarded) is in one of `networks`; null when there are none, so that callers ask nothing.
 * node:net's BlockList does the matching; it also matches an IPv4-mapped IPv6 address
 * (`::ffff:203.0.113.7`) against IPv4 networks.
 */
export function trustedNetworkMatcher(networks: readonly string[]): ((address: string) => boolean) | null {
  if (networks.length === 0) return null;
  const list = addTo(new BlockList(), networks);
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/** Adds each `address` or `address/bits` to `list`; throws on anything else. */
function addTo(list: BlockList, entries: readonly string[]): BlockList {
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) throw new Error(`not an address or CIDR: ${entry}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(address, type);
      continue;
    }
    // Digits only: Number('') is 0 and Number('0x8') is 8, neither of which was written as a prefix.
    if (!/^\d{1,3}$/.test(bits)) throw new Error(`not a prefix length: ${entry}`);
    list.addSubnet(address, Number(bits), type); // throws past /32 or /128
  }
  return list;
}
