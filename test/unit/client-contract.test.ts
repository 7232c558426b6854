// The typed client's own copy of the contract: this fails when it drifts from the server's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PASSWORD_REFUSALS, type PasswordRefusal } from '../../src/auth/password-rules.ts';
import {
  API_ERROR_CODES,
  BULK_MAX_TASKS,
  MAX_PASSWORD_LENGTH as CLIENT_MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH as CLIENT_MIN_PASSWORD_LENGTH,
  WORK_BITS_MAX as CLIENT_WORK_BITS_MAX,
  type AdminUser as ClientAdminUser,
  type Client as ClientClient,
  type ControlName as ClientControlName,
  type Device as ClientDevice,
  type ClientErrorCode,
  type Role as ClientRole,
  type Session as ClientSession,
  type Task as ClientTask,
  type TaskStatus as ClientTaskStatus,
  type User as ClientUser,
  CONTROL_NAMES,
  type ControlReport,
  leadingZeroBits as clientLeadingZeroBits,
  workMessage as clientWorkMessage,
  type LoginPressure,
  PASSKEY_NAME_MAX,
  PASSKEYS_MAX,
  PASSWORD_REFUSAL_REASONS,
  type Passkey,
  type PasswordRefusalReason,
  type ServerErrorCode,
  TASK_STATUSES,
} from '../../src/client/index.ts';
import type { AdminUser } from '../../src/db/repositories/admin-users.ts';
import type { Client } from '../../src/db/repositories/clients.ts';
import type { Device } from '../../src/db/repositories/known-devices.ts';
import type { Passkey as ServerPasskey } from '../../src/db/repositories/passkeys.ts';
import type { SessionListing } from '../../src/db/repositories/sessions.ts';
import type { User } from '../../src/db/repositories/users.ts';
import type { Task } from '../../src/domain.ts';
import { type Role, TASK_STATUSES as SERVER_TASK_STATUSES, type TaskStatus } from '../../src/domain.ts';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import {
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  BULK_MAX_TASKS as SERVER_BULK_MAX_TASKS,
  PASSKEY_NAME_MAX as SERVER_PASSKEY_NAME_MAX,
  PASSKEYS_MAX as SERVER_PASSKEYS_MAX,
} from '../../src/limits.ts';
import type { LoginPressureReport } from '../../src/login/pressure-report.ts';
import { leadingZeroBits, WORK_BITS_MAX, workMessage } from '../../src/login/proved-work.ts';
import type { RateLimitReport } from '../../src/rate-limit/engine.ts';
import { CONTROLS, type ControlName } from '../../src/rate-limit/policy.ts';

// Compile-time half: `npm test` type-checks this file first, and `sameType<A, B>(true)` only
// compiles when A and B are exactly the same type (`true` is not assignable to `false`).
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const sameType = <A, B>(_proof: Equal<A, B>): void => {};
/** The client's shapes are read-only views of the server's JSON; compare them without that. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type DeepMutable<T> = { -readonly [K in keyof T]: T[K] extends object ? DeepMutable<T[K]> : T[K] };

const sorted = (values: Iterable<string>) => [...values].sort();

describe('client contract', () => {
  it('solves proved work as the server judges it: the same message, the same count of bits, the same cap', () => {
    assert.equal(CLIENT_WORK_BITS_MAX, WORK_BITS_MAX);
    assert.equal(clientWorkMessage('w1.a.b.c', 'z9'), workMessage('w1.a.b.c', 'z9'));
    for (const bytes of [[0x80], [0x01, 0xff], [0, 0, 0x20], [0, 0, 0, 0, 0]])
      assert.equal(clientLeadingZeroBits(Uint8Array.from(bytes)), leadingZeroBits(Uint8Array.from(bytes)));
  });

  it('names every error code of the server table, and no other', () => {
    sameType<ServerErrorCode, ErrorCode>(true);
    assert.deepEqual(sorted(API_ERROR_CODES), sorted(Object.keys(ERRORS)));
  });

  it('makes up only codes the server does not use', () => {
    const own: readonly ClientErrorCode[] = ['UNEXPECTED_RESPONSE', 'NETWORK_ERROR'];
    sameType<Extract<ClientErrorCode, ErrorCode>, never>(true);
    for (const code of own) assert.equal(Object.hasOwn(ERRORS, code), false, code);
  });

  it('names every control of the rate-limit policy, and no other', () => {
    // Derived from the policy's own type and table, so a new control fails here until the client has it.
    sameType<ClientControlName, ControlName>(true);
    assert.deepEqual(sorted(CONTROL_NAMES), sorted(Object.keys(CONTROLS)));
  });

  it('reads GET /api/rate-limits entries as the server writes them', () => {
    sameType<keyof ControlReport, keyof RateLimitReport>(true);
    sameType<Mutable<Omit<ControlReport, 'code'>>, Omit<RateLimitReport, 'code'>>(true);
    // The client reads `code` as any string, which every server code is.
    sameType<Extract<ErrorCode, ControlReport['code']>, ErrorCode>(true);
  });

  it('allows as many tasks per bulk request as the server', () => {
    sameType<typeof BULK_MAX_TASKS, typeof SERVER_BULK_MAX_TASKS>(true);
    assert.equal(BULK_MAX_TASKS, SERVER_BULK_MAX_TASKS);
  });

  it('knows the passkey limits and shape of the server (docs/rules.md#passkeys)', () => {
    assert.equal(PASSKEYS_MAX, SERVER_PASSKEYS_MAX);
    assert.equal(PASSKEY_NAME_MAX, SERVER_PASSKEY_NAME_MAX);
    sameType<Mutable<Passkey>, ServerPasskey>(true);
  });

  it('reads GET /api/admin/login-pressure as the server writes it', () => {
    sameType<DeepMutable<LoginPressure>, LoginPressureReport>(true);
  });

  it('shapes sessions, devices, admin users and password refusals as the server does (accounts)', () => {
    sameType<Mutable<Omit<ClientSession, 'current'>>, SessionListing>(true);
    sameType<ClientSession['current'], boolean>(true);
    sameType<Mutable<ClientDevice>, Device>(true);
    sameType<Mutable<ClientAdminUser>, AdminUser>(true);
    sameType<PasswordRefusalReason, PasswordRefusal>(true);
    assert.deepEqual(PASSWORD_REFUSAL_REASONS, PASSWORD_REFUSALS);
    assert.equal(CLIENT_MIN_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH);
    assert.equal(CLIENT_MAX_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH);
  });

  it('lists the task statuses of the server, in its order', () => {
    sameType<typeof TASK_STATUSES, typeof SERVER_TASK_STATUSES>(true);
    assert.deepEqual(TASK_STATUSES, SERVER_TASK_STATUSES);
  });

  it('shapes users, tasks and clients as the server does', () => {
    sameType<ClientRole, Role>(true);
    sameType<ClientTaskStatus, TaskStatus>(true);
    sameType<Mutable<ClientUser>, User>(true);
    sameType<Mutable<ClientTask>, Task>(true);
    sameType<Mutable<ClientClient>, Client>(true);
  });
});
