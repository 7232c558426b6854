// The Admin page's pure units: who sees which page, the events list across pages, and the wording of locks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SecurityEvent } from '../../src/client/index.ts';
import {
  addressesText,
  controlLabel,
  failuresText,
  lockKey,
  repeatsText,
  subjectOf,
} from '../../web/src/admin/admin-wording.ts';
import { viewFromHash, viewsFor } from '../../web/src/shared/portal-view.ts';
import { eventListReducer, NO_EVENTS } from '../../web/src/shared/security-event-pages.ts';

const admin = { role: 'admin' } as const;
const employee = { role: 'employee' } as const;

const event = (id: number): SecurityEvent => ({
  id,
  at: new Date(1_700_000_000_000 - id * 1000).toISOString(),
  type: 'lock-started',
  control: 'login-account',
  email: `user${id}@example.com`,
  address: null,
  instance: 'a',
  actorId: null,
});

describe('portal views', () => {
  it('gives admins Tasks, People, Clients and Admin, employees Tasks alone (so no navigation)', () => {
    assert.deepEqual(viewsFor(admin), ['tasks', 'people', 'clients', 'admin']);
    assert.deepEqual(viewsFor(employee), ['tasks']);
  });

  it('opens the page the hash names when the user may see it, Tasks otherwise', () => {
    assert.equal(viewFromHash(admin, '#admin'), 'admin');
    assert.equal(viewFromHash(admin, '#tasks'), 'tasks');
    assert.equal(viewFromHash(admin, ''), 'tasks');
    assert.equal(viewFromHash(admin, '#nonsense'), 'tasks');
    assert.equal(viewFromHash(employee, '#admin'), 'tasks');
  });
});

describe('security event pages', () => {
  it('shows the newest page, then appends older ones without repeating an event', () => {
    let state = eventListReducer(NO_EVENTS, {
      type: 'newest',
      page: { events: [event(1), event(2)], nextCursor: 'c1' },
    });
    assert.equal(state.loading, false);
    state = eventListReducer(state, { type: 'loading' });
    assert.equal(state.loading, true);
    // An event recorded meanwhile shifts the pages: event 2 comes again and is not repeated.
    state = eventListReducer(state, {
      type: 'older',
      after: 'c1',
      page: { events: [event(2), event(3)], nextCursor: null },
    });
    assert.deepEqual(
      state.events.map((e) => e.id),
      [1, 2, 3],
    );
    assert.equal(state.nextCursor, null);
    assert.equal(state.loading, false);
  });

  it('drops an older page that arrives after a refresh replaced the list it continued', () => {
    const first = eventListReducer(NO_EVENTS, {
      type: 'newest',
      page: { events: [event(2)], nextCursor: 'old' },
    });
    const refreshed = eventListReducer(first, {
      type: 'newest',
      page: { events: [event(4), event(3)], nextCursor: 'new' },
    });
    const late = eventListReducer(refreshed, {
      type: 'older',
      after: 'old',
      page: { events: [event(1)], nextCursor: null },
    });
    assert.deepEqual(late, refreshed);
  });

  it('replaces everything on a refresh and keeps what it shows when a load fails', () => {
    const shown = eventListReducer(NO_EVENTS, {
      type: 'newest',
      page: { events: [event(5)], nextCursor: 'c' },
    });
    const failed = eventListReducer(eventListReducer(shown, { type: 'loading' }), { type: 'failed' });
    assert.deepEqual(failed, shown);
    const refreshed = eventListReducer(failed, {
      type: 'newest',
      page: { events: [event(9)], nextCursor: null },
    });
    assert.deepEqual(
      refreshed.events.map((e) => e.id),
      [9],
    );
  });
});

describe('lock wording', () => {
  it('offers an unlock for account locks only', () => {
    assert.deepEqual(subjectOf({ email: 'alice@example.com' }), {
      text: 'alice@example.com',
      email: 'alice@example.com',
    });
    assert.deepEqual(subjectOf({ address: '203.0.113.7' }), { text: '203.0.113.7', email: null });
    assert.deepEqual(subjectOf({ device: '0123456789abcdef' }), { text: 'device 01234567…', email: null });
    assert.deepEqual(subjectOf({ email: null, address: null }), { text: 'Unknown', email: null });
  });

  it('names controls in words and keeps unknown ones as they are', () => {
    assert.equal(controlLabel('login-account'), 'Account');
    assert.equal(controlLabel('login-ip'), 'Network address');
    assert.equal(controlLabel('login-future'), 'login-future');
  });

  it('counts failures and keys each lock by control and subject', () => {
    assert.equal(failuresText(1), '1 failed sign-in');
    assert.equal(failuresText(10), '10 failed sign-ins');
    const a = lockKey({ control: 'login-account', email: 'a@x', failures: 10, retryAfter: 5 });
    const b = lockKey({ control: 'login-device', device: 'd1', failures: 10, retryAfter: 5 });
    assert.notEqual(a, b);
  });
});

describe('a summary of repeats in words', () => {
  const summary = (changes: Partial<SecurityEvent>): SecurityEvent => ({
    ...event(1),
    type: 'signed-in',
    count: 240,
    lastAt: '2026-01-01T12:09:58.000Z',
    addresses: ['203.0.113.1', '203.0.113.2', '203.0.113.3'],
    moreAddresses: false,
    ...changes,
  });
  const last = new Date('2026-01-01T12:09:58.000Z').toLocaleTimeString();

  it('says how many more times, from how many addresses, and when the last was', () => {
    assert.equal(repeatsText(summary({})), `240 more times from 3 addresses, the last at ${last}`);
    assert.equal(
      repeatsText(summary({ count: 1, addresses: ['203.0.113.1'] })),
      `1 more time from 1 address, the last at ${last}`,
    );
    assert.equal(
      repeatsText(summary({ addresses: ['a', 'b', 'c', 'd', 'e'], moreAddresses: true })),
      `240 more times from more than 5 addresses, the last at ${last}`,
    );
    assert.equal(repeatsText(summary({ addresses: [] })), `240 more times, the last at ${last}`);
  });

  it('lists the addresses kept, and says so when there were others', () => {
    assert.equal(addressesText(summary({})), '203.0.113.1, 203.0.113.2, 203.0.113.3');
    assert.equal(
      addressesText(summary({ moreAddresses: true })),
      '203.0.113.1, 203.0.113.2, 203.0.113.3 and others',
    );
    assert.equal(addressesText(summary({ addresses: [] })), null);
  });

  it('says nothing of an event stored as its own row', () => {
    assert.equal(repeatsText(event(1)), null);
    assert.equal(addressesText(event(1)), null);
  });
});
