// Turns every failure, from Node's parser to a route, into `{code, message}`; 5xx never show internals.
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../../db/availability.ts';
import { ApiError, ERRORS, type ErrorCode, errorBody } from '../../errors.ts';
import { StoreUnavailableError } from '../../rate-limit/stores/store.ts';
import { securityHeaders } from './security-headers.ts';

/** Fastify's own error codes, mapped to ours. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
};

/**
 * The wait a 503 for an absent rate-limit store asks for: the failover store probes the store again
 * a second after a failure (its `retryAfterMs`), so a client that waits this long meets the news.
 */
const STORE_RETRY_AFTER_SECONDS = 1;

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
  if (error instanceof StoreUnavailableError)
    return new ApiError('RATE_LIMIT_STORE_UNAVAILABLE', { retryAfter: STORE_RETRY_AFTER_SECONDS });
  if (error.validation) {
    const specific = request.routeOptions.config?.mapValidationError?.(error);
    if (specific) return specific;
    const [first] = error.validation;
    const where = `${error.validationContext ?? 'body'}${pathOf(first)}`;
    return new ApiError(
      'VALIDATION_ERROR',
      {
        errors: error.validation.map((v) => ({
          path: `${error.validationContext ?? 'body'}${pathOf(v)}`,
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
  // Any other client error a plugin raises (@fastify/static's 416 for an unsatisfiable Range, …)
  // stays a 4xx in our shape; only a status of 500 and up is ours to own.
  const status = error.statusCode ?? 500;
  if (status === 416) return new ApiError('RANGE_NOT_SATISFIABLE');
  if (status >= 400 && status < 500) return new ApiError('BAD_REQUEST');
  return null;
}

/**
 * Fastify answers a malformed URL (`/api/%zz`) or an over-long path parameter before routing, so
 * the error handler never sees them; this gives them our `{code, message}` instead of Fastify's.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const clientFault = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  if (!clientFault) request.log.error({ err: error }, 'request failed before routing');
  // Answered before routing, so no onSend hook adds the security headers: they are set here.
  reply
    .code(clientFault ? 400 : 500)
    .headers(securityHeaders(request.url))
    .send(errorBody(clientFault ? 'VALIDATION_ERROR' : 'INTERNAL_ERROR'));
}

/** How long a refused connection may go on sending before it is cut. */
const LINGER_MS = 5_000;
/** Sockets already answered: llhttp reports its error again for every later chunk. */
const answered = new WeakSet<Socket>();

/** Node's parser errors as ours (Node's own mapping, in our shape). */
function parserErrorCode(error: ConnectionError): ErrorCode {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'HEADERS_TOO_LARGE';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'REQUEST_TIMEOUT';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'PAYLOAD_TOO_LARGE';
    default:
      return 'BAD_REQUEST';
  }
}

/**
 * Answers a request Node's parser refused (headers over 16 KiB, a malformed request line, a
 * timeout) in our shape, with the security headers and `Connection: close`, then closes the
 * connection gracefully. Fastify's default writes neither and destroys the socket at once, so a
 * keep-alive client reuses a connection it believes open and meets a reset on its next request;
 * and destroying a socket with unread bytes makes the kernel reset it, the answer with it. Here
 * the answer is followed by a FIN, what the client still sends is read and dropped, and only a
 * client that keeps the connection open past LINGER_MS is cut.
 */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  this.log.debug({ err: error }, 'request refused by the HTTP parser');
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  const head = refusedHead(error);
  // A pipelined request failed while the one before it is still being answered: that answer goes
  // first and ours after it, never interleaved with it. (A request whose own body failed to parse,
  // a bad chunk size, is answered at once: its route waits for a body that will never come.)
  const ownBodyFailed = inFlight?.req?.complete === false && !inFlight.headersSent;
  if (inFlight && !inFlight.writableFinished && !ownBodyFailed) {
    inFlight.once('finish', () => answer(socket, parserErrorCode(error), head));
    inFlight.once('close', () => {
      if (!inFlight.writableFinished) socket.destroy();
    });
    return;
  }
  answer(socket, parserErrorCode(error), head);
}

/**
 * Whether the refused request is a HEAD, whose answer has no body (a client would read ours as
 * the start of a next answer). Read from the bytes the parser failed on, where the failed
 * request starts after the last complete header block; a request line in an earlier packet
 * (headers over 16 KiB sent in pieces) is not seen, and gets a body.
 */
function refusedHead(error: ConnectionError): boolean {
  const packet: unknown = error.rawPacket;
  if (!Buffer.isBuffer(packet)) return false;
  const parsed = packet.toString('latin1', 0, Math.min(packet.length, error.bytesParsed ?? packet.length));
  const start = parsed.lastIndexOf('\r\n\r\n');
  return parsed.startsWith('HEAD ', start < 0 ? 0 : start + 4);
}

function answer(socket: Socket, code: ErrorCode, head: boolean): void {
  if (socket.destroyed || !socket.writable) return;
  const status = ERRORS[code].status;
  const body = JSON.stringify(errorBody(code));
  const headers = {
    ...securityHeaders('/api/'),
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    date: new Date().toUTCString(),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}\r\n${head ? '' : body}`);
  // Keep reading (and dropping) until the client closes: unread bytes would turn the close into a reset.
  socket.resume();
}

export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // The database away is no bug: a 503 that says when to come back, logged once per outage
    // (database-outage.ts), not once per request.
    if (error instanceof DatabaseUnavailableError) {
      const retryAfter = app.databaseOutage.refuse();
      return reply
        .code(503)
        .header('retry-after', String(retryAfter))
        .header('cache-control', 'no-store')
        .send(errorBody('DATABASE_UNAVAILABLE', { retryAfter }));
    }
    const apiError = toApiError(error, request);
    if (apiError) {
      // A 429 or 503 that says how long to wait says it in Retry-After too, and is never cached.
      const { retryAfter } = apiError.details;
      // Such a 503 is a state the service announces (a full store under a flood, a required API
      // away), answered many times over while it lasts: its request line says it, once per request.
      if (apiError.statusCode >= 500 && typeof retryAfter !== 'number')
        request.log.error({ err: error }, 'request failed');
      if (typeof retryAfter === 'number')
        reply.headers({ 'retry-after': retryAfter, 'cache-control': 'no-store' });
      return reply.code(apiError.statusCode).send(apiError.toBody());
    }
    // Anything else is ours to fix: log all of it, tell the client nothing of it.
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(errorBody('INTERNAL_ERROR'));
  });

  // Requests that match no route pass the app's onRequest hooks too (security headers, session,
  // an /api path's generic bucket in the rate-limit plugin) before this handler.
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(
        errorBody('NOT_FOUND', { message: `No route for ${request.method} ${request.url.split('?')[0]}.` }),
      );
  });
}

/**
 * Where a schema violation is: its instance path, and for a field that is not allowed the field
 * itself (`body/version`), so that every 400 names the field at fault.
 */
function pathOf(
  violation: { instancePath?: string; keyword?: string; params?: unknown } | undefined,
): string {
  const path = violation?.instancePath ?? '';
  const extra = (violation?.params as { additionalProperty?: unknown } | undefined)?.additionalProperty;
  return violation?.keyword === 'additionalProperties' && typeof extra === 'string'
    ? `${path}/${extra}`
    : path;
}
