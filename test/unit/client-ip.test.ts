// The client address key (IPv4-mapped, IPv6 prefixes) and TRUST_PROXY's forms.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressKey, parseTrustProxy } from '../../src/rate-limit/client-ip.ts';

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
    const a = addressKey('::ffff:192.0.2.1', 56);
    const b = addressKey('::FFFF:192.0.2.2', 56);
    assert.equal(a, '192.0.2.1');
    assert.equal(b, '192.0.2.2');
    assert.equal(addressKey('192.0.2.1', 56), a);
  });

  it('keys what is not an address (a proxy’s `unknown`, garbage) as a bounded opaque token', () => {
    assert.equal(addressKey('unknown', 64), 'invalid:unknown');
    assert.equal(addressKey('', 64), 'invalid:');
    assert.equal(addressKey('a'.repeat(3000), 64), `invalid:${'a'.repeat(64)}`);
    assert.notEqual(addressKey('unknown', 64), addressKey('192.0.2.1', 64));
  });
});

describe('parseTrustProxy', () => {
  it('accepts nothing, hop counts and address lists; refuses the rest', () => {
    for (const none of ['', ' ', 'false', '0']) assert.equal(parseTrustProxy(none), false, none);
    assert.equal(parseTrustProxy('2'), 2);
    assert.deepEqual(parseTrustProxy('10.0.0.0/8, ::1'), ['10.0.0.0/8', '::1']);
    for (const bad of ['10.0.0.0/33', 'proxy.example', '1.2.3.4/8/9', '::1/129', '33', '10.0.0.1,,'])
      assert.equal(parseTrustProxy(bad), null, bad);
  });
});
