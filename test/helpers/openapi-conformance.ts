// Every answer an HTTP test sees, checked against the served OpenAPI document.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

type Schema = Record<string, unknown>;

interface HeaderObject {
  readonly schema?: Schema;
  readonly required?: boolean;
}

interface ResponseObject {
  readonly description?: string;
  readonly headers?: Record<string, HeaderObject>;
  readonly content?: Record<string, { schema?: Schema }>;
}

interface OpenApiDocument {
  readonly components?: Schema;
  readonly paths: Record<string, Record<string, { responses?: Record<string, ResponseObject> }>>;
}

/** One operation of the document, and the request paths it answers. */
interface Operation {
  readonly method: string;
  readonly template: string;
  readonly pattern: RegExp;
  readonly parameters: number;
  readonly responses: Record<string, ResponseObject>;
}

/** The answer of an /api path that no operation matches: the shared error body, never cached. */
const UNMATCHED: ResponseObject = {
  headers: { 'Cache-Control': { schema: { type: 'string', enum: ['no-store'] }, required: true } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

// OpenAPI 3.0 schemas are JSON Schema with a few keywords of their own (`nullable`, `example`).
const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true });
// ajv-formats is CommonJS: its function is the default export's `default`.
formats.default(ajv);
/** Compiled once per schema for the whole test file: every app serves the same document. */
const compiled = new Map<string, ValidateFunction>();

function validator(schema: Schema, components: Schema | undefined): ValidateFunction {
  // The operation's schema inside a root that holds the components its `$ref`s point into.
  const root = { components, allOf: [schema] };
  const key = JSON.stringify(root);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(root);
    compiled.set(key, validate);
  }
  return validate;
}

export class AnswerChecker {
  private readonly operations: Operation[];
  private readonly components: Schema | undefined;

  constructor(document: OpenApiDocument) {
    this.components = document.components;
    this.operations = Object.entries(document.paths).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        pattern: templatePattern(template),
        parameters: (template.match(/\{/g) ?? []).length,
        responses: operation.responses ?? {},
      })),
    );
    // A path's static segments win over a parameter, as in Fastify's router.
    this.operations.sort((a, b) => a.parameters - b.parameters);
  }

  /** What in this answer the document does not allow; empty when it matches. */
  problems(method: string, url: string, response: LightMyRequestResponse): string[] {
    const path = url.split('?')[0]!;
    const asMethod = method === 'HEAD' ? 'GET' : method;
    const operation = this.operations.find((op) => op.method === asMethod && op.pattern.test(path));
    const status = response.statusCode;
    const code = errorCode(response);
    const where = `${method} ${operation?.template ?? path} → ${status}${code ? ` ${code}` : ''}`;
    let answer: ResponseObject | undefined;
    if (operation) {
      const { responses } = operation;
      answer = responses[status] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default;
      if (!answer) {
        const declared = Object.keys(responses).join(', ');
        return [`${where}: status ${status} is not declared (declared: ${declared})`];
      }
    } else if (isApi(path) && status >= 400) {
      answer = UNMATCHED;
    } else {
      return []; // the portal's files, /healthz, /docs: not part of the API document
    }
    return [
      ...this.headerProblems(answer, response).map((problem) => `${where}: ${problem}`),
      ...(method === 'HEAD'
        ? []
        : this.bodyProblems(answer, response).map((problem) => `${where}: ${problem}`)),
    ];
  }

  private headerProblems(answer: ResponseObject, response: LightMyRequestResponse): string[] {
    const problems: string[] = [];
    for (const [name, object] of Object.entries(answer.headers ?? {})) {
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (object.required) problems.push(`header ${name} is missing`);
        continue;
      }
      if (!object.schema) continue;
      const validate = validator(object.schema, this.components);
      for (const one of Array.isArray(value) ? value : [value]) {
        const typed = asSchemaType(String(one), object.schema);
        if (!validate(typed))
          problems.push(`header ${name}${describe(validate.errors)} (value ${JSON.stringify(one)})`);
      }
    }
    return problems;
  }

  private bodyProblems(answer: ResponseObject, response: LightMyRequestResponse): string[] {
    const json = answer.content?.['application/json'];
    // A CSV answer (the task export) is text the document does not describe further.
    if (answer.content?.['text/csv']) {
      const type = String(response.headers['content-type'] ?? '');
      return type.startsWith('text/csv') ? [] : [`content-type ${JSON.stringify(type)} is not text/csv`];
    }
    if (!json) {
      return response.body === ''
        ? []
        : [`the document declares no body, but one was sent: ${response.body.slice(0, 200)}`];
    }
    const type = String(response.headers['content-type'] ?? '');
    if (!type.startsWith('application/json'))
      return [`content-type ${JSON.stringify(type)} is not application/json`];
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return [`the body is not JSON: ${response.body.slice(0, 200)}`];
    }
    if (!json.schema) return [];
    const validate = validator(json.schema, this.components);
    return validate(body) ? [] : [`body${describe(validate.errors)} (body ${response.body.slice(0, 300)})`];
  }
}

/** `/api/employee/tasks/{id}` → a RegExp of the paths it stands for (a parameter is one segment). */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}$`);
}

/** A header's text as the value its schema describes (OpenAPI's `simple` style): `12` → 12 for an integer. */
function asSchemaType(text: string, schema: Schema): unknown {
  const numeric = schema.type === 'integer' || schema.type === 'number';
  return numeric && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/** Ajv's errors as `/path: message` lines, the deepest first (a `oneOf` lists every branch). */
function describe(errors: ErrorObject[] | null | undefined): string {
  const list = [...(errors ?? [])].sort((a, b) => b.instancePath.length - a.instancePath.length);
  return list
    .slice(0, 4)
    .map((e) => `${e.instancePath ? ` ${e.instancePath}` : ''}: ${e.message ?? 'is invalid'}${paramsText(e)}`)
    .join('; ');
}

function paramsText(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if ('allowedValues' in params) return ` ${JSON.stringify(params.allowedValues)}`;
  if ('additionalProperty' in params) return ` (${String(params.additionalProperty)})`;
  return '';
}

function errorCode(response: LightMyRequestResponse): string | null {
  if (response.statusCode < 400) return null;
  try {
    const code = (JSON.parse(response.body) as { code?: unknown }).code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

function isApi(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

type Inject = FastifyInstance['inject'];

/**
 * Makes every `app.inject(options)` of this app check its answer against the document the app
 * serves at /docs/json, and fail (reject with the mismatches) when it does not match. Calls with
 * a callback or without options (the chained form) go through unchecked.
 */
export function checkAnswersAgainstDocument(app: FastifyInstance): void {
  const original = app.inject.bind(app) as Inject;
  const inject = original as unknown as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  let checker: Promise<AnswerChecker> | null = null;
  const checked = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const response = await inject(options);
    checker ??= inject({ method: 'GET', url: '/docs/json' }).then(
      (served) => new AnswerChecker(served.json() as OpenApiDocument),
    );
    const request = typeof options === 'string' ? { url: options } : options;
    const method = String(request.method ?? 'GET').toUpperCase();
    const url = typeof request.url === 'string' ? request.url : String(request.path ?? '/');
    const problems = (await checker).problems(method, url, response);
    if (problems.length > 0)
      throw new Error(`The answer does not match the OpenAPI document:\n  ${problems.join('\n  ')}`);
    return response;
  };
  app.inject = ((options?: InjectOptions | string, callback?: unknown) =>
    options === undefined || callback !== undefined
      ? original(options as InjectOptions, callback as never)
      : checked(options)) as Inject;
}
