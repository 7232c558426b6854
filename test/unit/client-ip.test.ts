// The client address behind the keys: socket peer, trusted proxies only, IPv4-mapped and IPv6 prefixes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressKey, clientAddress, parseTrustProxy } from '../../src/rate-limit/client-ip.ts';

const trust = (text: string) => {
  const parsed = parseTrustProxy(text);
  assert.ok(parsed, `TRUST_PROXY=${text} parses`);
  return parsed;
};

describe('clientAddress', () => {
  it('ignores X-Forwarded-For and Forwarded when no proxy is trusted', () => {
    const headers = { 'x-forwarded-for': '1.2.3.4', forwarded: 'for=5.6.7.8' };
    assert.equal(clientAddress('203.0.113.9', headers, trust('')), '203.0.113.9');
  });

  it('takes the address one hop to the left per trusted hop', () => {
    const headers = { 'x-forwarded-for': 'spoofed, 198.51.100.7, 10.0.0.2' };
    assert.equal(clientAddress('10.0.0.1', headers, trust('1')), '10.0.0.2');
    assert.equal(clientAddress('10.0.0.1', headers, trust('2')), '198.51.100.7');
  });

  it('walks from the right past trusted CIDRs and stops at the first untrusted address', () => {
    const headers = { 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.0.0.2' };
    assert.equal(clientAddress('10.0.0.1', headers, trust('10.0.0.0/8')), '198.51.100.7');
  });

  it('does not honour forwarding headers sent by an untrusted peer', () => {
    const headers = { 'x-forwarded-for': '198.51.100.7' };
    assert.equal(clientAddress('203.0.113.50', headers, trust('10.0.0.0/8')), '203.0.113.50');
  });

  it('ignores a Forwarded header (proxies pass the client’s own through), reading X-Forwarded-For only', () => {
    const forwarded = 'for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711"';
    assert.equal(clientAddress('10.0.0.1', { forwarded }, trust('10.0.0.1')), '10.0.0.1');
    const both = { forwarded, 'x-forwarded-for': '2001:db8:cafe::17' };
    assert.equal(clientAddress('10.0.0.1', both, trust('10.0.0.1')), '2001:db8:cafe::17');
  });

  it('stops at garbage in the chain instead of trusting what lies left of it', () => {
    const headers = { 'x-forwarded-for': '198.51.100.7, unknown' };
    assert.equal(clientAddress('10.0.0.1', headers, trust('10.0.0.0/8')), 'invalid:unknown');
  });

  it('turns IPv4-mapped IPv6 peers into their IPv4 address', () => {
    assert.equal(clientAddress('::ffff:192.0.2.1', {}, trust('')), '192.0.2.1');
  });
});

describe('addressKey', () => {
  it('keys IPv6 clients by their /64 and keeps distinct /64s apart', () => {
    assert.equal(addressKey('2001:db8:1:2:aaaa::1', 64), addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee', 64));
    assert.notEqual(addressKey('2001:db8:1:2::1', 64), addressKey('2001:db8:1:3::1', 64));
    assert.equal(addressKey('2001:db8:1:2:aaaa::1', 64), '2001:db8:1:2:0:0:0:0/64');
  });

  it('honours another prefix length', () => {
    assert.equal(addressKey('2001:db8:1:2ff::1', 56), addressKey('2001:db8:1:200::9', 56));
    assert.notEqual(addressKey('2001:db8:1:2ff::1', 56), addressKey('2001:db8:1:300::9', 56));
  });

  it('keeps IPv4 clients apart, including ones that arrived IPv4-mapped (express-rate-limit advisory)', () => {
    // The advisory: applying the IPv6 /56 mask to ::ffff:a.b.c.d put every IPv4 client in one bucket.
    const a = addressKey(clientAddress('::ffff:192.0.2.1', {}, trust('')), 56);
    const b = addressKey(clientAddress('::ffff:192.0.2.2', {}, trust('')), 56);
    assert.equal(a, '192.0.2.1');
    assert.notEqual(a, b);
  });
});

describe('parseTrustProxy', () => {
  it('accepts nothing, hop counts and address lists; refuses the rest', () => {
    assert.deepEqual(parseTrustProxy(''), { kind: 'none' });
    assert.deepEqual(parseTrustProxy('2'), { kind: 'hops', hops: 2 });
    assert.equal(parseTrustProxy('10.0.0.0/8, ::1')?.kind, 'list');
    for (const bad of ['10.0.0.0/33', 'proxy.example', '1.2.3.4/8/9', '::1/129'])
      assert.equal(parseTrustProxy(bad), null, bad);
  });
});
