// The HTTP suite's check of every answer against the OpenAPI document.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { AnswerChecker } from '../helpers/openapi-conformance.ts';

const document = {
  components: {
    schemas: {
      Error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
  paths: {
    '/api/things/{id}': {
      get: {
        responses: {
          200: {
            headers: { 'RateLimit-Remaining': { schema: { type: 'integer', minimum: 0 } } },
            content: {
              'application/json': {
                schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
              },
            },
          },
          404: {
            content: {
              'application/json': {
                schema: {
                  allOf: [
                    { $ref: '#/components/schemas/Error' },
                    { properties: { code: { type: 'string', enum: ['NOT_FOUND'] } } },
                  ],
                },
              },
            },
          },
          429: {
            headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 }, required: true } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        },
      },
    },
    '/api/things/mine': { get: { responses: { 204: { description: 'none' } } } },
  },
};

const checker = new AnswerChecker(document);

function answer(statusCode: number, body: unknown, headers: Record<string, string | string[]> = {}) {
  return {
    statusCode,
    body: body === undefined ? '' : JSON.stringify(body),
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  } as unknown as LightMyRequestResponse;
}

describe('AnswerChecker', () => {
  it('lets through an answer the document declares, with its headers read as their schema types', () => {
    assert.deepEqual(
      checker.problems('GET', '/api/things/7?x=1', answer(200, { id: 7 }, { 'ratelimit-remaining': '3' })),
      [],
    );
    assert.deepEqual(checker.problems('HEAD', '/api/things/7', answer(200, undefined)), []);
    assert.deepEqual(checker.problems('GET', '/api/things/mine', answer(204, undefined)), []);
  });

  it('names the route, the status and the code of an undeclared status', () => {
    assert.deepEqual(checker.problems('GET', '/api/things/7', answer(503, { code: 'BUSY', message: 'm' })), [
      'GET /api/things/{id} → 503 BUSY: status 503 is not declared (declared: 200, 404, 429)',
    ]);
  });

  it('names the path in the body that breaks the schema', () => {
    const [problem] = checker.problems('GET', '/api/things/7', answer(404, { code: 'GONE', message: 'm' }));
    assert.match(
      problem!,
      /^GET \/api\/things\/\{id\} → 404 GONE: body \/code: must be equal to one of the allowed values \["NOT_FOUND"\]/,
    );
    const [shape] = checker.problems('GET', '/api/things/7', answer(200, { id: 'seven' }));
    assert.match(shape!, /→ 200: body \/id: must be integer/);
  });

  it('fails a missing required header and a header that breaks its schema', () => {
    assert.deepEqual(checker.problems('GET', '/api/things/7', answer(429, { code: 'SLOW', message: 'm' })), [
      'GET /api/things/{id} → 429 SLOW: header Retry-After is missing',
    ]);
    assert.deepEqual(
      checker.problems('GET', '/api/things/7', answer(200, { id: 7 }, { 'ratelimit-remaining': '-1' })),
      ['GET /api/things/{id} → 200: header RateLimit-Remaining: must be >= 0 (value "-1")'],
    );
  });

  it('prefers a static path to a parameter, and holds a bodiless answer to having no body', () => {
    const [problem] = checker.problems('GET', '/api/things/mine', answer(204, { id: 1 }));
    assert.match(problem!, /^GET \/api\/things\/mine → 204: the document declares no body, but one was sent/);
  });

  it('holds an /api path no operation matches to the shared error body, and leaves other paths alone', () => {
    assert.deepEqual(
      checker.problems('DELETE', '/api/things/7', answer(404, { code: 'NOT_FOUND', message: 'm' })),
      [],
    );
    const [problem] = checker.problems('GET', '/api/nothing', answer(404, { error: 'nope' }));
    assert.match(problem!, /^GET \/api\/nothing → 404: body: must have required property 'code'/);
    assert.deepEqual(checker.problems('GET', '/index.html', answer(200, 'page')), []);
  });
});
