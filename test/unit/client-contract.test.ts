// The typed client's own copy of the contract: this fails when it drifts from the server's. (The names
// and limits it imports from the server's shared modules cannot drift: test/unit/layers.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  API_ERROR_CODES,
  type AdminUser as ClientAdminUser,
  type Client as ClientClient,
  type Device as ClientDevice,
  type ClientErrorCode,
  type Session as ClientSession,
  type Task as ClientTask,
  type User as ClientUser,
  type ControlReport,
  type LoginPressure,
  type Passkey,
  type ServerErrorCode,
} from '../../src/client/index.ts';
import type { AdminUser } from '../../src/db/repositories/admin-users.ts';
import type { Client } from '../../src/db/repositories/clients.ts';
import type { Device } from '../../src/db/repositories/known-devices.ts';
import type { Passkey as ServerPasskey } from '../../src/db/repositories/passkeys.ts';
import type { SessionListing } from '../../src/db/repositories/sessions.ts';
import type { User } from '../../src/db/repositories/users.ts';
import type { Task } from '../../src/domain.ts';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import type { LoginPressureReport } from '../../src/login/pressure-report.ts';
import type { RateLimitReport } from '../../src/rate-limit/engine.ts';

// Compile-time half: `npm test` type-checks this file first, and `sameType<A, B>(true)` only
// compiles when A and B are exactly the same type (`true` is not assignable to `false`).
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const sameType = <A, B>(_proof: Equal<A, B>): void => {};
/** The client's shapes are read-only views of the server's JSON; compare them without that. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type DeepMutable<T> = { -readonly [K in keyof T]: T[K] extends object ? DeepMutable<T[K]> : T[K] };

const sorted = (values: Iterable<string>) => [...values].sort();

describe('client contract', () => {
  it('names every error code of the server table, and no other', () => {
    sameType<ServerErrorCode, ErrorCode>(true);
    assert.deepEqual(sorted(API_ERROR_CODES), sorted(Object.keys(ERRORS)));
  });

  it('makes up only codes the server does not use', () => {
    const own: readonly ClientErrorCode[] = ['UNEXPECTED_RESPONSE', 'NETWORK_ERROR'];
    sameType<Extract<ClientErrorCode, ErrorCode>, never>(true);
    for (const code of own) assert.equal(Object.hasOwn(ERRORS, code), false, code);
  });

  it('reads GET /api/rate-limits entries as the server writes them', () => {
    sameType<keyof ControlReport, keyof RateLimitReport>(true);
    sameType<Mutable<Omit<ControlReport, 'code'>>, Omit<RateLimitReport, 'code'>>(true);
    // The client reads `code` as any string, which every server code is.
    sameType<Extract<ErrorCode, ControlReport['code']>, ErrorCode>(true);
  });

  it('shapes passkeys as the server does (docs/rules.md#passkeys)', () => {
    sameType<Mutable<Passkey>, ServerPasskey>(true);
  });

  it('reads GET /api/admin/login-pressure as the server writes it', () => {
    sameType<DeepMutable<LoginPressure>, LoginPressureReport>(true);
  });

  it('shapes sessions, devices and admin users as the server does (accounts)', () => {
    sameType<Mutable<Omit<ClientSession, 'current'>>, SessionListing>(true);
    sameType<ClientSession['current'], boolean>(true);
    sameType<Mutable<ClientDevice>, Device>(true);
    sameType<Mutable<ClientAdminUser>, AdminUser>(true);
  });

  it('shapes users, tasks and clients as the server does', () => {
    sameType<Mutable<ClientUser>, User>(true);
    sameType<Mutable<ClientTask>, Task>(true);
    sameType<Mutable<ClientClient>, Client>(true);
  });
});
