// Reads a response's rate-limit headers with a strict structured-field parser, as clients would.
import assert from 'node:assert/strict';
import { parseList } from 'structured-headers';
import type { Response } from './app.ts';

export interface RateLimitHeaders {
  limit: number;
  remaining: number;
  reset: number;
  policy: { name: string; q: number; w: number };
  state: { name: string; r: number; t: number };
  retryAfter: number | null;
}

/** Parses the draft-06 triple and the RateLimit-Policy/RateLimit pair, checking they agree. */
export function rateLimitHeaders(response: Response): RateLimitHeaders {
  const header = (name: string) => {
    const value = response.headers[name];
    assert.equal(typeof value, 'string', `${name} is present`);
    return value as string;
  };
  const integer = (name: string) => {
    const text = header(name);
    assert.match(text, /^\d+$/, `${name} is a non-negative integer`);
    return Number(text);
  };
  const [policyItem, ...morePolicies] = parseList(header('ratelimit-policy'));
  const [stateItem, ...moreStates] = parseList(header('ratelimit'));
  assert.equal(morePolicies.length + moreStates.length, 0, 'one policy per response');
  assert.ok(policyItem && stateItem);
  const [policyName, policyParams] = policyItem as [string, Map<string, number>];
  const [stateName, stateParams] = stateItem as [string, Map<string, number>];
  assert.equal(typeof policyName, 'string', 'the policy name is an sf-string');
  assert.equal(stateName, policyName);
  assert.ok(!stateParams.has('pk') && !policyParams.has('pk'), 'no partition key is sent');
  const result: RateLimitHeaders = {
    limit: integer('ratelimit-limit'),
    remaining: integer('ratelimit-remaining'),
    reset: integer('ratelimit-reset'),
    policy: { name: policyName, q: policyParams.get('q')!, w: policyParams.get('w')! },
    state: { name: stateName, r: stateParams.get('r')!, t: stateParams.get('t')! },
    retryAfter: response.headers['retry-after'] === undefined ? null : integer('retry-after'),
  };
  assert.equal(result.state.r, result.remaining, 'r equals RateLimit-Remaining');
  assert.equal(result.state.t, result.reset, 't equals RateLimit-Reset');
  assert.equal(result.policy.q, result.limit, 'q equals RateLimit-Limit');
  return result;
}

export function assertNoRateLimitHeaders(response: Response): void {
  for (const name of [
    'ratelimit-limit',
    'ratelimit-remaining',
    'ratelimit-reset',
    'ratelimit-policy',
    'ratelimit',
  ]) {
    assert.equal(response.headers[name], undefined, `${name} is absent`);
  }
}

/** Checks a 429 completely: code, body, Retry-After = RateLimit-Reset ≥ 1, no-store, policy name. */
export function assertRefused(response: Response, code: string, policy: string): RateLimitHeaders {
  assert.equal(response.statusCode, 429);
  const headers = rateLimitHeaders(response);
  const body = response.json<{ code: string; message: string; retryAfter: number }>();
  assert.equal(body.code, code);
  assert.equal(typeof body.message, 'string');
  assert.equal(headers.policy.name, policy);
  assert.equal(headers.remaining, 0);
  assert.ok(headers.retryAfter !== null && headers.retryAfter >= 1, 'Retry-After is at least 1');
  assert.equal(headers.retryAfter, headers.reset, 'Retry-After equals RateLimit-Reset');
  assert.equal(body.retryAfter, headers.retryAfter);
  assert.equal(response.headers['cache-control'], 'no-store');
  return headers;
}
