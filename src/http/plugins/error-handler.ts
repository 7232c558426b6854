// Turns every failure into `{code, message}` with the status of its code; 5xx never show internals.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode, errorBody } from '../../errors.ts';
import { StoreUnavailableError } from '../../rate-limit/stores/store.ts';

/** Fastify's own error codes, mapped to ours. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
};

export type ValidationMapper = (error: FastifyError) => ApiError | null;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Lets a route give a schema violation a more specific code than VALIDATION_ERROR. */
    mapValidationError?: ValidationMapper;
  }
}

export function toApiError(error: FastifyError, request: FastifyRequest): ApiError | null {
  if (error instanceof ApiError) return error;
  // A store failure inside a route (the login's reservation, /api/rate-limits) in `closed` mode: a 503, never a 500.
  if (error instanceof StoreUnavailableError) return new ApiError('RATE_LIMIT_STORE_UNAVAILABLE');
  if (error.validation) {
    const specific = request.routeOptions.config?.mapValidationError?.(error);
    if (specific) return specific;
    const [first] = error.validation;
    const where = `${error.validationContext ?? 'body'}${first?.instancePath ?? ''}`;
    return new ApiError(
      'VALIDATION_ERROR',
      {
        errors: error.validation.map((v) => ({
          path: `${error.validationContext ?? 'body'}${v.instancePath}`,
          message: v.message,
        })),
      },
      `Invalid request: ${where} ${first?.message ?? 'is invalid'}.`,
    );
  }
  const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (mapped) return new ApiError(mapped);
  if (error instanceof SyntaxError || (error.statusCode === 400 && error.code?.startsWith('FST_ERR_CTP'))) {
    return new ApiError('INVALID_JSON');
  }
  return null;
}

/**
 * Fastify answers a malformed URL (`/api/%zz`) or an over-long path parameter before routing, so
 * the error handler never sees them; this gives them our `{code, message}` instead of Fastify's.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const clientFault = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  if (!clientFault) request.log.error({ err: error }, 'request failed before routing');
  reply
    .code(clientFault ? 400 : 500)
    .header('cache-control', 'no-store')
    .send(errorBody(clientFault ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR'));
}

export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error, request);
    if (apiError) {
      if (apiError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      return reply.code(apiError.statusCode).send(apiError.toBody());
    }
    // Anything else is ours to fix: log all of it, tell the client nothing of it.
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('INTERNAL_ERROR'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(
        errorBody('NOT_FOUND', { message: `No route for ${request.method} ${request.url.split('?')[0]}.` }),
      );
  });
}
