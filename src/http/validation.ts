// Schema validators: strict for bodies, coercing for the URL, and only values the database can take.

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { UNSTORABLE_TEXT } from '../limits.ts';
import type { DeferredCompilations } from './deferred-compilation.ts';

const common = {
  allErrors: false,
  removeAdditional: false,
  useDefaults: true,
  strict: true,
  allowUnionTypes: true,
} as const;
// A body of `{"taskIds": ["1"]}` is a wrong type, not a number: bodies are never coerced.
const bodyAjv = new Ajv({ ...common, coerceTypes: false });
// Query strings and params arrive as text and are coerced to the declared types.
const urlAjv = new Ajv({ ...common, coerceTypes: true });
for (const ajv of [bodyAjv, urlAjv]) ajv.addKeyword({ keyword: 'example' });

type Validator = ((data: unknown, context?: object) => boolean) & {
  errors?: ErrorObject[] | null;
  schemaEnv?: unknown;
};

/**
 * Compiles a request schema (body, querystring, params, headers) into a validator that also
 * refuses, wherever they sit, what JavaScript accepts and PostgreSQL does not:
 *
 * - non-finite numbers. Ajv coerces the text `Infinity` or `1e400` to `Infinity`, calls it an
 *   integer, and skips `minimum`/`maximum` for it; JSON.parse makes `1e400` Infinity too.
 * - strings with U+0000 or a lone surrogate, which a PostgreSQL text parameter refuses (a 500
 *   from the database, or a login that tells a refused byte from a wrong password).
 *
 * A schema whose numbers are unbounded is refused at registration: every number a client sends is
 * an id or a count, and each must say its range (PostgreSQL's `integer` for ids).
 */
export function validatorCompiler(compilations: DeferredCompilations): FastifySchemaCompiler<unknown> {
  return ({ schema, httpPart, url, method }) => {
    const unbounded = unboundedNumbers(schema, '');
    if (unbounded.length > 0) {
      throw new Error(
        `${method} ${url}: ${httpPart} numbers need a minimum and a maximum (${unbounded.join(', ')})`,
      );
    }
    // Ajv's code is made on the route's first request (deferred-compilation.ts).
    const compiled = compilations.defer(
      () => (httpPart === 'body' ? bodyAjv : urlAjv).compile(schema as object) as ValidateFunction,
    );
    const checked: Validator = (data, context) => {
      const validate = compiled();
      if (!validate(data, context as Parameters<ValidateFunction>[1])) {
        checked.errors = validate.errors ?? null;
        return false;
      }
      const unsafe = unsafeValue(data);
      checked.errors = unsafe ? [unsafe] : null;
      return unsafe === null;
    };
    // Fastify hands an Ajv validator (one with a schemaEnv) the request as parent, so that a root
    // value can be coerced: every one here is Ajv's, compiled or not yet.
    checked.schemaEnv = true;
    return checked;
  };
}

/** The first value in `data` that must not reach SQL, as an Ajv error; null when there is none. */
export function unsafeValue(data: unknown): ErrorObject | null {
  // Iterative: the data passed its schema, but a schema may still allow free-form nesting.
  const pending: [unknown, string][] = [[data, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      return problem(path, 'finite', 'must be a finite number');
    }
    if (typeof value === 'string') {
      if (UNSTORABLE_TEXT.test(value))
        return problem(path, 'storable', 'must not contain U+0000 or a lone surrogate');
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        pending.push([key, path]);
        pending.push([child, `${path}/${key}`]);
      }
    }
  }
  return null;
}

function problem(instancePath: string, keyword: string, message: string): ErrorObject {
  return { instancePath, schemaPath: '#', keyword, params: {}, message };
}

/** JSON pointers of the `integer`/`number` schemas in `schema` that lack a minimum or a maximum. */
function unboundedNumbers(schema: unknown, pointer: string): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const node = schema as Record<string, unknown>;
  const types = ([] as unknown[]).concat(node.type ?? []);
  const numeric = types.includes('integer') || types.includes('number');
  const own =
    numeric && (typeof node.minimum !== 'number' || typeof node.maximum !== 'number') ? [pointer || '/'] : [];
  const nested = Object.entries(node).flatMap(([key, child]) =>
    key === 'enum' || key === 'const' || key === 'default' || key === 'examples'
      ? []
      : unboundedNumbers(child, `${pointer}/${key}`),
  );
  return [...own, ...nested];
}
