// The views' document titles and the fields' error attributes, and index.html's copy of the name.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fieldErrorProps } from '../../web/src/shared/field-error.ts';
import { PORTAL_NAME, pageTitle } from '../../web/src/shared/page-title.ts';

describe('pageTitle', () => {
  it('names the view before the portal', () => {
    assert.equal(pageTitle('Sign in'), 'Sign in — Task portal');
    assert.equal(pageTitle(null), PORTAL_NAME);
  });

  it("matches index.html's title, the one shown before the script runs", () => {
    const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');
    assert.equal(/<title>([^<]*)<\/title>/.exec(html)?.[1], PORTAL_NAME);
  });
});

describe('fieldErrorProps', () => {
  it('marks a field invalid and describes it by every message shown', () => {
    assert.deepEqual(fieldErrorProps(true, 'login-error', null, 'password-hint'), {
      'aria-invalid': 'true',
      'aria-describedby': 'login-error password-hint',
    });
  });

  it('leaves both attributes out when nothing is wrong or said', () => {
    assert.deepEqual(fieldErrorProps(false, null, false, undefined, ''), {
      'aria-invalid': undefined,
      'aria-describedby': undefined,
    });
  });
});
