// The password rules (docs/rules.md#accounts): length, the email, the list, weak ones, the breach API.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  commonPasswordList,
  PasswordCheckUnavailableError,
  PasswordRules,
  offlineRefusal as refusalOf,
  unchangedRefusal,
} from '../../src/auth/password-rules.ts';

const EMAIL = 'Frederic.Chopin@Example.com';

/** The reason alone. */
const offlineRefusal = (password: string, email: string) => refusalOf(password, email)?.reason ?? null;

/** Easy to guess for their length, each accepted before `weak` (docs/rules.md#accounts). */
const WEAK_PASSWORDS = [
  '111111111111',
  'aaaaaaaaaaaa',
  ' '.repeat(12),
  '\u200b'.repeat(12),
  '!password1234',
  ' password1234',
  'password1234\u200b',
  'qwertyuiopas',
  'abcabcabcabc',
  '123456789012',
  'qwertyuiop123',
];

describe('offlineRefusal', () => {
  it('counts characters as a person does: 12 to 128', () => {
    assert.equal(offlineRefusal('é'.repeat(11), EMAIL), 'too_short');
    assert.equal(offlineRefusal('🎹🎻plum orbit', EMAIL), null, 'twelve code points, 14 UTF-16 units');
    const phrase = 'copper kettle in the orchard, plum orbit lantern 47 quietly; ';
    assert.equal(offlineRefusal(phrase.padEnd(128, 'é'), EMAIL), null);
    assert.equal(offlineRefusal(phrase.padEnd(129, 'é'), EMAIL), 'too_long');
  });

  it('counts the length of the NFKC form, the one hashed: what composes counts once', () => {
    // Twelve conjoining jamo compose into four syllables; "a" and a combining acute into "á".
    const jamo = '\u1100\u1161\u11a8'.repeat(4);
    assert.equal([...jamo].length, 12);
    assert.equal(offlineRefusal(jamo, EMAIL), 'too_short');
    assert.equal(offlineRefusal('a\u0301'.repeat(6), EMAIL), 'too_short');
    // Compatibility forms expand: "ﬀ" (one character) is "ff" (two) once hashed.
    assert.equal(offlineRefusal('\ufb00'.repeat(65), EMAIL), 'too_long');
  });

  it('refuses passwords easy to guess for their length as weak, with a message that says why', () => {
    for (const password of WEAK_PASSWORDS) {
      const refused = refusalOf(password, EMAIL);
      assert.equal(refused?.reason, 'weak', JSON.stringify(password));
      assert.match(refused.message, /^This password is easy to guess: .+\. Choose another one/);
    }
    const why = (password: string) => refusalOf(password, EMAIL)?.message ?? '';
    assert.match(why('aaaaaaaaaaaa'), /a character repeated/);
    assert.match(why('abcabcabcabc'), /a group of characters repeated/);
    assert.match(why('123456789012'), /a sequence|keyboard/);
    assert.match(why(' '.repeat(12)), /only spaces or characters that cannot be seen/);
    assert.match(why('!password1234'), /a common password with characters added around it/);
  });

  it('welcomes passphrases of ordinary words', () => {
    for (const password of [
      'copper kettle in the orchard',
      'plum orbit lantern 47 quietly',
      'violet harbour cinder 93 slowly',
      'amber quarry whistle 58 gently',
      'correct horse battery staple',
    ])
      assert.equal(offlineRefusal(password, EMAIL), null, password);
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
    for (const password of ['Password1234', 'PASSWORD1234', 'iloveyou2024!!', '1q2w3e4r5t6y'])
      assert.equal(offlineRefusal(password, EMAIL), 'common', password);
    assert.equal(offlineRefusal('plum orbit lantern 47 quietly', EMAIL), null);
  });

  it('ships tens of thousands of entries, read once and let go 5 minutes after the last use', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const list = commonPasswordList();
    assert.ok(list.size >= 40_000, `${list.size} entries`);
    t.mock.timers.tick(4 * 60_000);
    assert.equal(offlineRefusal('Password1234', EMAIL), 'common');
    t.mock.timers.tick(4 * 60_000);
    assert.equal(commonPasswordList(), list, 'the same Set while passwords are set');
    t.mock.timers.tick(5 * 60_000);
    assert.notEqual(commonPasswordList(), list, 'read again after 5 idle minutes');
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

describe('unchangedRefusal', () => {
  const temporary = 'abcde-fghjk-mnpqr-stuvw-xyz23';

  it('refuses the current password, temporary or not', () => {
    assert.equal(unchangedRefusal(temporary, temporary, true)?.reason, 'unchanged');
    assert.equal(unchangedRefusal('plum orbit lantern', 'plum orbit lantern', false)?.reason, 'unchanged');
    assert.equal(unchangedRefusal('ﬀ plum orbit', 'ff plum orbit', false)?.reason, 'unchanged', 'NFKC');
  });

  it('refuses a new password that contains the temporary one, whatever the case, separators or invisible characters', () => {
    for (const password of [
      `${temporary}!`,
      `my ${temporary.toUpperCase()}`,
      temporary.replaceAll('-', ''),
      temporary.replaceAll('-', ' '),
      `${temporary.slice(0, 10)}\u200b${temporary.slice(10)}`,
    ]) {
      const refused = unchangedRefusal(password, temporary, true);
      assert.equal(refused?.reason, 'unchanged', password);
      assert.match(refused.message, /does not contain your temporary one/);
    }
  });

  it('lets a password of one’s own grow, and takes what does not contain the temporary one', () => {
    assert.equal(unchangedRefusal('plum orbit lantern at dawn', 'plum orbit lantern', false), null);
    assert.equal(unchangedRefusal('copper kettle in the orchard', temporary, true), null);
    assert.equal(unchangedRefusal(`${temporary.slice(0, 20)} kettle`, temporary, true), null);
  });
});

describe('PasswordRules with a range API', () => {
  const password = 'plum orbit lantern 47 quietly';
  const hash = createHash('sha1').update(password).digest('hex').toUpperCase();

  it('sends the first 5 hex characters of the SHA-1 only, and refuses a listed suffix', async (t) => {
    const api = await rangeApi(`${hash.slice(5)}:2\n00000000000000000000000000000000000:0`);
    t.after(api.close);
    const rules = new PasswordRules({ breachApi: api.url, breachApiRequired: false });
    assert.equal((await rules.refusal(password, EMAIL))?.reason, 'breached');
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
    assert.equal((await rules.refusal('short', EMAIL))?.reason, 'too_short');
    assert.deepEqual(api.asked, []);
  });
});
