// The password rules (docs/rules.md#accounts): length, the email, the list, a slow or down range API.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  commonPasswordList,
  offlineRefusal,
  PasswordCheckUnavailableError,
  PasswordRules,
} from '../../src/auth/password-rules.ts';

const EMAIL = 'Frederic.Chopin@Example.com';

describe('offlineRefusal', () => {
  it('counts characters as a person does: 12 to 128', () => {
    assert.equal(offlineRefusal('é'.repeat(11), EMAIL), 'too_short');
    assert.equal(offlineRefusal('🎹'.repeat(12), EMAIL), null, 'twelve code points, 24 UTF-16 units');
    assert.equal(offlineRefusal('é'.repeat(128), EMAIL), null);
    assert.equal(offlineRefusal('é'.repeat(129), EMAIL), 'too_long');
  });

  it('refuses the email or its local part anywhere in the password, whatever the case', () => {
    for (const password of [
      'frederic.chopin@example.com',
      'my FREDERIC.CHOPIN 1810!',
      'xx frederic.chopin@example.comxx',
    ])
      assert.equal(offlineRefusal(password, EMAIL), 'contains_email', password);
    // A local part under 4 characters is part of too many words to refuse.
    assert.equal(offlineRefusal('a bob in the garden', 'bob@example.com'), null);
    assert.equal(offlineRefusal('a bobby in the garden', 'bobby@example.com'), 'contains_email');
  });

  it('refuses a listed password, case-insensitively, and one followed by digits and symbols', () => {
    for (const password of [
      'Password1234',
      'PASSWORD1234',
      'qwertyuiop123',
      'iloveyou2024!!',
      '1q2w3e4r5t6y',
    ])
      assert.equal(offlineRefusal(password, EMAIL), 'common', password);
    assert.equal(offlineRefusal('plum orbit lantern 47 quietly', EMAIL), null);
  });

  it('ships tens of thousands of entries, read once', () => {
    const list = commonPasswordList();
    assert.ok(list.size >= 40_000, `${list.size} entries`);
    assert.equal(commonPasswordList(), list, 'the same Set on every call');
  });
});

/** A range API on a port of this machine that answers after `delayMs`. */
async function rangeApi(body: string, delayMs = 0) {
  const asked: string[] = [];
  const server = createServer((request, response) => {
    asked.push(request.url ?? '');
    const timer = setTimeout(() => response.end(body), delayMs);
    response.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    asked,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('PasswordRules with a range API', () => {
  const password = 'plum orbit lantern 47 quietly';
  const hash = createHash('sha1').update(password).digest('hex').toUpperCase();

  it('sends the first 5 hex characters of the SHA-1 only, and refuses a listed suffix', async (t) => {
    const api = await rangeApi(`${hash.slice(5)}:2\n00000000000000000000000000000000000:0`);
    t.after(api.close);
    const rules = new PasswordRules({ breachApi: api.url, breachApiRequired: false });
    assert.equal(await rules.refusal(password, EMAIL), 'breached');
    assert.deepEqual(api.asked, [`/range/${hash.slice(0, 5)}`]);
    assert.ok(!api.asked[0]!.includes(hash.slice(5)));
  });

  it('takes a padding line (count 0) for not listed', async (t) => {
    const api = await rangeApi(`${hash.slice(5)}:0`);
    t.after(api.close);
    assert.equal(
      await new PasswordRules({ breachApi: api.url, breachApiRequired: false }).refusal(password, EMAIL),
      null,
    );
  });

  it('gives up on a slow API after its budget: lets the password through with a warning, or, required, refuses to decide', async (t) => {
    const api = await rangeApi(`${hash.slice(5)}:2`, 10_000);
    t.after(api.close);
    const warnings: unknown[] = [];
    const lenient = new PasswordRules({
      breachApi: api.url,
      breachApiRequired: false,
      breachTimeoutMs: 50,
      onBreachApiTrouble: (error) => warnings.push(error),
    });
    const started = performance.now();
    assert.equal(await lenient.refusal(password, EMAIL), null);
    assert.ok(performance.now() - started < 5000, 'within the budget, not the answer');
    assert.equal(warnings.length, 1);
    const strict = new PasswordRules({ breachApi: api.url, breachApiRequired: true, breachTimeoutMs: 50 });
    await assert.rejects(strict.refusal(password, EMAIL), PasswordCheckUnavailableError);
  });

  it('checks the offline rules first: a short password never reaches the API', async (t) => {
    const api = await rangeApi('');
    t.after(api.close);
    const rules = new PasswordRules({ breachApi: api.url, breachApiRequired: true });
    assert.equal(await rules.refusal('short', EMAIL), 'too_short');
    assert.deepEqual(api.asked, []);
  });
});
