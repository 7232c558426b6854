// The Account and People pages' pure units: refusals by field, browsers named, the people list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AdminUser, ApiError } from '../../src/client/index.ts';
import {
  browserName,
  confirmationProblem,
  describeEndError,
  endedSentence,
  PASSWORD_REFUSALS,
  passwordChangeProblem,
} from '../../web/src/account/account-wording.ts';
import { watchPasswordChange } from '../../web/src/password-change-watch.ts';
import { withPerson } from '../../web/src/people/people-list.ts';
import { describePeopleError, personState } from '../../web/src/people/people-wording.ts';
import { viewFromHash, viewsFor } from '../../web/src/shared/portal-view.ts';

const apiError = (
  status: number,
  code: string,
  body: Record<string, unknown> = {},
  message = `the server's words for ${code}`,
) => new ApiError({ status, code, message, body: { code, ...body } });

const person = (id: number, changes: Partial<AdminUser> = {}): AdminUser => ({
  id,
  email: `person${id}@example.com`,
  name: `Person ${id}`,
  role: 'employee',
  mustChangePassword: false,
  disabled: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  lastSignInAt: null,
  ...changes,
});

describe('a refused password change', () => {
  it('gives every refusal reason its own words, beside the new password', () => {
    const seen = new Set<string>();
    for (const reason of Object.keys(PASSWORD_REFUSALS) as (keyof typeof PASSWORD_REFUSALS)[]) {
      const problem = passwordChangeProblem(apiError(422, 'PASSWORD_REFUSED', { reason }, ''));
      assert.deepEqual(problem, { field: 'new', text: PASSWORD_REFUSALS[reason] });
      seen.add(problem.text);
    }
    assert.equal(seen.size, Object.keys(PASSWORD_REFUSALS).length, 'each reason says something else');
    assert.match(PASSWORD_REFUSALS.common, /common/);
    assert.match(PASSWORD_REFUSALS.breached, /breach/);
  });

  it('shows why a password is weak in the server’s words, which name the pattern found', () => {
    const why = 'This password is easy to guess: a character repeated, like aaa or 111, is easy to guess.';
    assert.deepEqual(passwordChangeProblem(apiError(422, 'PASSWORD_REFUSED', { reason: 'weak' }, why)), {
      field: 'new',
      text: why,
    });
    assert.match(PASSWORD_REFUSALS.weak, /easy to guess/);
  });

  it("keeps the server's words for a reason this page does not know yet", () => {
    const problem = passwordChangeProblem(apiError(422, 'PASSWORD_REFUSED', { reason: 'newer' }));
    assert.deepEqual(problem, { field: 'new', text: "the server's words for PASSWORD_REFUSED" });
  });

  it('puts a wrong current password, and too many of them, beside the current password', () => {
    assert.equal(passwordChangeProblem(apiError(422, 'CURRENT_PASSWORD_INVALID')).field, 'current');
    assert.equal(passwordChangeProblem(apiError(429, 'LOGIN_RATE_LIMIT')).field, 'current');
  });

  it('says of the rest that nothing changed, for the form as a whole', () => {
    const problem = passwordChangeProblem(apiError(503, 'PASSWORD_CHECK_UNAVAILABLE'));
    assert.equal(problem.field, 'form');
    assert.match(problem.text, /Nothing was changed/);
    assert.equal(passwordChangeProblem(new Error('boom')).field, 'form');
  });

  it('compares the second copy only once something is typed in it', () => {
    assert.equal(confirmationProblem('correct horse battery', ''), null);
    assert.equal(confirmationProblem('correct horse battery', 'correct horse battery'), null);
    assert.match(confirmationProblem('correct horse battery', 'correct horse') ?? '', /not the same/);
  });
});

describe('sessions and devices in words', () => {
  it('names a browser and its system from the User-Agent', () => {
    const chrome =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
    assert.equal(browserName(chrome), 'Chrome on Linux');
    const firefox = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:121.0) Gecko/20100101 Firefox/121.0';
    assert.equal(browserName(firefox), 'Firefox on Mac OS');
    assert.equal(browserName(null), 'An unknown browser');
    assert.equal(browserName('curl/8.1.0'), 'A program (curl/8.1.0)');
  });

  it('says plainly that a session or device was already gone (a page out of date)', () => {
    assert.match(describeEndError(apiError(404, 'NOT_FOUND'), 'session'), /already ended/);
    assert.match(describeEndError(apiError(404, 'NOT_FOUND'), 'device'), /already been forgotten/);
  });

  it('counts the other sessions ended', () => {
    assert.equal(endedSentence(0), 'There was no other session to end.');
    assert.match(endedSentence(1), /^1 other session ended/);
    assert.match(endedSentence(3), /^3 other sessions ended/);
  });
});

describe('the People page', () => {
  it('is a page for admins only', () => {
    assert.deepEqual(viewsFor({ role: 'admin' }), ['tasks', 'people', 'clients', 'admin']);
    assert.equal(viewFromHash({ role: 'admin' }, '#people'), 'people');
    assert.equal(viewFromHash({ role: 'employee' }, '#people'), 'tasks');
  });

  it('puts a changed account in its place and a new one at the end', () => {
    const list = [person(1), person(2)];
    assert.deepEqual(
      withPerson(list, person(2, { name: 'Renamed' })).map((p) => p.name),
      ['Person 1', 'Renamed'],
    );
    assert.deepEqual(
      withPerson(list, person(3)).map((p) => p.id),
      [1, 2, 3],
    );
    assert.equal(list.length, 2, 'the list shown is not changed in place');
  });

  it('says what each account can do now', () => {
    assert.equal(personState(person(1)), 'Active');
    assert.equal(personState(person(1, { mustChangePassword: true })), 'Must choose a new password');
    assert.equal(personState(person(1, { disabled: true, mustChangePassword: true })), 'Disabled');
  });

  it('words the refusals an admin can act on', () => {
    assert.match(describePeopleError(apiError(422, 'LAST_ADMIN')), /no enabled admin/);
    assert.match(describePeopleError(apiError(409, 'EMAIL_TAKEN')), /already exists/);
  });
});

describe('watchPasswordChange', () => {
  const answering = (status: number, body: unknown) => async () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  it('tells its listeners of a 403 PASSWORD_CHANGE_REQUIRED and passes the answer on unread', async () => {
    const watch = watchPasswordChange(answering(403, { code: 'PASSWORD_CHANGE_REQUIRED', message: 'm' }));
    let told = 0;
    const stop = watch.subscribe(() => told++);
    const response = await watch.fetch('/api/employee/tasks');
    assert.equal(told, 1);
    assert.equal(((await response.json()) as { code: string }).code, 'PASSWORD_CHANGE_REQUIRED');
    stop();
    await watch.fetch('/api/employee/tasks');
    assert.equal(told, 1, 'not after unsubscribing');
  });

  it('stays quiet for any other answer, a 403 included', async () => {
    let told = 0;
    for (const [status, body] of [
      [403, { code: 'FORBIDDEN' }],
      [403, 'not json'],
      [200, { code: 'PASSWORD_CHANGE_REQUIRED' }],
    ] as const) {
      const watch = watchPasswordChange(answering(status, body));
      watch.subscribe(() => told++);
      await watch.fetch('/api/anything');
    }
    assert.equal(told, 0);
  });
});
