// Request logs: one line per answered request, written straight to the app logger's destination.
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import pino, { type Logger } from 'pino';

/**
 * Fastify's default writes two lines per request ("incoming request", then "request completed"),
 * each through the request's child logger. This writes one line when the answer is sent, with the
 * request id as a field: the same facts (method, URL, client address, status, time taken).
 * "incoming request" is still written at debug level, where a request that never completes can
 * be traced, and a request that failed goes through pino with its error.
 *
 * The completed line is the one every request pays for, so it is put together here, field by
 * field, in the very shape pino gives it (level, time, the logger's bindings, the fields, msg),
 * and handed to the logger's own destination, in order with its other lines. Going through pino's
 * generic path (a fields object, key by key, each value escaped char by char) measured twice the
 * CPU for the same bytes (BENCHMARKS.md).
 */
export class RequestLogController extends LogController {
  private readonly log: Logger;
  /** The JSON that opens every completed line: `{"level":30,"time":` (pino's default keys). */
  private readonly opening: string;
  /** The logger's bindings as pino serialised them (`,"pid":…,"hostname":…`). */
  private readonly bindings: string;
  /** Where the logger writes (stdout's batches, or a development transport). */
  private readonly destination: { write(line: string): void };
  private lastMethod: string | null = null;
  private lastMethodJson = '""';
  private lastAddress: string | null = null;
  private lastAddressJson = '';
  /** Told of every answered request before its line is written (the metrics plugin counts them). */
  private listeners: readonly CompletionListener[] = [];

  constructor(log: Logger) {
    super({ requestIdLogLabel: 'reqId' });
    this.log = log;
    this.opening = `{"level":${log.levels.values.info},"time":`;
    const internals = log as unknown as Record<symbol, unknown>;
    this.bindings = (internals[pino.symbols.chindingsSym] as string | undefined) ?? '';
    this.destination = internals[pino.symbols.streamSym] as { write(line: string): void };
  }

  /**
   * Calls `listener` with every request answered from now on; returns what stops it. Fastify
   * calls this controller once per answered request (the request logger's place), so a listener
   * here costs a request one call, where an onResponse hook costs a turn of the hook runner.
   */
  onCompleted(listener: CompletionListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((other) => other !== listener);
    };
  }

  override incomingRequest(request: FastifyRequest): void {
    if (!this.log.isLevelEnabled('debug')) return;
    const { id, method, url, ip } = request;
    this.log.debug({ reqId: id, method, url, remoteAddress: ip }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) listeners[i]!(request, reply);
    if (error) {
      if (!this.log.isLevelEnabled('error')) return;
      this.log.error({ ...requestDetails(request, reply), err: error }, 'request errored');
      return;
    }
    if (!this.log.isLevelEnabled('info')) return;
    const address = request.ip;
    // JSON.stringify escapes what a client controls (the id header, the URL). The method and the
    // address repeat from request to request (every request comes from the proxy's address behind
    // one): their JSON is kept from the last time.
    const method = request.method;
    if (method !== this.lastMethod) {
      this.lastMethod = method;
      this.lastMethodJson = JSON.stringify(method);
    }
    let addressJson = '';
    if (address !== undefined) {
      if (address !== this.lastAddress) {
        this.lastAddress = address;
        this.lastAddressJson = `,"remoteAddress":${JSON.stringify(address)}`;
      }
      addressJson = this.lastAddressJson;
    }
    const line =
      `${this.opening}${Date.now()}${this.bindings},"reqId":${JSON.stringify(request.id)}` +
      `,"method":${this.lastMethodJson},"url":${JSON.stringify(request.url)}${addressJson}` +
      `,"statusCode":${reply.statusCode},"responseTime":${millis(reply.elapsedTime)}` +
      ',"msg":"request completed"}\n';
    this.destination.write(line);
  }
}

/**
 * A duration in ms as a JSON number to the microsecond (`0.073`, `12`, `1.5`). Pino would write
 * the whole double (`0.07291698455810547`): its digits below a microsecond are noise, and
 * printing a double takes about three times as long as printing two small integers.
 */
export function millis(ms: number): string {
  const micros = Math.round(ms * 1000);
  if (!(micros >= 0 && micros < 2 ** 31)) return Number.isFinite(ms) ? String(ms) : '0';
  const whole = Math.floor(micros / 1000);
  let fraction = micros - whole * 1000;
  if (fraction === 0) return String(whole);
  let digits = 3;
  while (fraction % 10 === 0) {
    fraction /= 10;
    digits--;
  }
  const text = String(fraction);
  return `${whole}.${text.length === digits ? text : '00'.slice(0, digits - text.length) + text}`;
}

/** Told of an answered request (its status is final). */
export type CompletionListener = (request: FastifyRequest, reply: FastifyReply) => void;

/** The fields of a request line, for lines that go through pino. */
function requestDetails(request: FastifyRequest, reply: FastifyReply) {
  return {
    reqId: request.id,
    method: request.method,
    url: request.url,
    remoteAddress: request.ip,
    statusCode: reply.statusCode,
    responseTime: reply.elapsedTime,
  };
}
