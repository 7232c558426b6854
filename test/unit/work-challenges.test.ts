// Proved-work challenges (docs/rules.md#proved-work): what a solution proves, and what proves nothing.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.ts';
import { leadingZeroBits, WORK_CHALLENGE_TTL_MS, workMessage } from '../../src/login/proved-work.ts';
import { WorkChallenges, type WorkRefusal } from '../../src/login/work-challenges.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';
import { FLOOD, floodOfOneBitSolutions, solveBetween } from '../helpers/proved-work.ts';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const ALICE = 'alice@example.com';

/** The first nonce whose hash starts with at least `bits` zero bits (node:crypto: the test's own solver). */
function solve(challenge: string, bits: number): { nonce: string; proved: number } {
  for (let n = 0; ; n++) {
    const nonce = n.toString(36);
    const proved = leadingZeroBits(createHash('sha256').update(workMessage(challenge, nonce)).digest());
    if (proved >= bits) return { nonce, proved };
  }
}

function setup(claims?: { claimOnce: () => Promise<boolean> }) {
  const clock = new ManualClock();
  const store = new MemoryStore({ clock, sweepIntervalMs: 0 });
  const refused: WorkRefusal[] = [];
  const challenges = new WorkChallenges({ secret: SECRET, clock, claims: claims ?? store });
  challenges.observe((reason) => refused.push(reason));
  return { clock, store, challenges, refused };
}

describe('leadingZeroBits', () => {
  it('counts the zero bits a digest starts with', () => {
    assert.equal(leadingZeroBits(Uint8Array.of(0x80, 0)), 0);
    assert.equal(leadingZeroBits(Uint8Array.of(0x01, 0xff)), 7);
    assert.equal(leadingZeroBits(Uint8Array.of(0, 0, 0x20)), 18);
    assert.equal(leadingZeroBits(new Uint8Array(32)), 256);
  });
});

describe('WorkChallenges', () => {
  it('counts the bits a solution proves, once', async () => {
    const { challenges, refused } = setup();
    const challenge = challenges.issue(ALICE);
    const { nonce, proved } = solve(challenge, 6);
    assert.equal(await challenges.prove(ALICE, { challenge, nonce }), proved);
    assert.ok(proved >= 6);
    assert.equal(await challenges.prove(ALICE, { challenge, nonce }), 0, 'a replay proves nothing');
    assert.deepEqual(refused, ['reused']);
  });

  it('binds a challenge to the email in its normal form, and to nothing else', async () => {
    const { challenges, refused } = setup();
    const challenge = challenges.issue('  Alice@Example.COM ');
    const { nonce, proved } = solve(challenge, 4);
    assert.equal(await challenges.prove('bob@example.com', { challenge, nonce }), 0);
    assert.equal(
      await challenges.prove(ALICE, { challenge, nonce }),
      proved,
      'the same address, spelled otherwise',
    );
    assert.deepEqual(refused, ['forged']);
  });

  it('is valid for two minutes from its issue', async () => {
    const { clock, challenges, refused } = setup();
    const early = challenges.issue(ALICE);
    const late = challenges.issue(ALICE);
    const [a, b] = [solve(early, 3), solve(late, 3)];
    clock.advance(WORK_CHALLENGE_TTL_MS - 1);
    assert.equal(await challenges.prove(ALICE, { challenge: early, nonce: a.nonce }), a.proved);
    clock.advance(1);
    assert.equal(await challenges.prove(ALICE, { challenge: late, nonce: b.nonce }), 0);
    assert.deepEqual(refused, ['expired']);
  });

  it('counts a forged or altered challenge, and a hash with no zero bit, as no work', async () => {
    const { challenges, refused } = setup();
    const challenge = challenges.issue(ALICE);
    const [version, expires, series, slot, mac] = challenge.split('.') as [
      string,
      string,
      string,
      string,
      string,
    ];
    const later = (Number.parseInt(expires, 36) + 60_000).toString(36);
    const forged = [
      `${version}.${later}.${series}.${slot}.${mac}`, // a longer life
      `${version}.${expires}.${'A'.repeat(16)}.${slot}.${mac}`, // another series under the same MAC
      `${version}.${expires}.${series}.${slot}1.${mac}`, // another slot under the same MAC
      `${version}.${expires}.${series}.${slot}.${'A'.repeat(22)}`,
      'w2.zzzzzzzz.not-a-challenge',
      '',
    ];
    for (const fake of forged) {
      const { nonce } = solve(fake, 4);
      assert.equal(await challenges.prove(ALICE, { challenge: fake, nonce }), 0, fake);
    }
    let nonce = 0;
    while (
      leadingZeroBits(
        createHash('sha256')
          .update(workMessage(challenge, String(nonce)))
          .digest(),
      ) > 0
    )
      nonce++;
    assert.equal(await challenges.prove(ALICE, { challenge, nonce: String(nonce) }), 0);
    assert.deepEqual(refused, ['forged', 'forged', 'forged', 'forged', 'forged', 'forged', 'no-work']);
    assert.equal(await challenges.prove(ALICE, undefined), 0, 'no solution: no work, nothing refused');
    assert.equal(refused.length, 7);
  });

  it('counts no work when the store cannot say the challenge is unused, and never rejects', async () => {
    const { challenges, refused } = setup({
      claimOnce: () => Promise.reject(new Error('the store is away')),
    });
    const challenge = challenges.issue(ALICE);
    const { nonce } = solve(challenge, 3);
    assert.equal(await challenges.prove(ALICE, { challenge, nonce }), 0);
    assert.deepEqual(refused, ['store-unavailable']);
  });

  it('counts a solution below the bits asked when it arrives as no work, and does not record it', async () => {
    const { challenges, refused } = setup();
    const challenge = challenges.issue(ALICE);
    const weak = solveBetween(challenge, 1, 3);
    assert.equal(await challenges.prove(ALICE, { challenge, nonce: weak }, 4), 0);
    assert.deepEqual(refused, ['below-asked']);
    const { nonce, proved } = solve(challenge, 4);
    assert.equal(
      await challenges.prove(ALICE, { challenge, nonce }, 4),
      proved,
      'the challenge is still unused',
    );
  });

  it('credits an honest solution after more one-bit solutions than the record ever held', async () => {
    const { challenges } = setup();
    await floodOfOneBitSolutions(challenges, FLOOD);
    const challenge = challenges.issue(ALICE);
    const { nonce, proved } = solve(challenge, 8);
    assert.equal(await challenges.prove(ALICE, { challenge, nonce }, 1), proved);
  });
});
