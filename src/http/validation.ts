// Schema validators: strict for bodies (no coercion, no silently dropped fields), coercing for the URL.

import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

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

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : urlAjv).compile(schema as object);
