// Fuzz requests over real sockets: a keep-alive node:http agent, and raw sockets for odd bytes.
import http from 'node:http';
import net from 'node:net';

export interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** What came of one request: its answer, or the socket error that took its place. */
export type Outcome =
  | { readonly kind: 'answer'; readonly answer: Answer; readonly reusedSocket: boolean }
  | { readonly kind: 'error'; readonly code: string; readonly reusedSocket: boolean };

export interface Target {
  readonly host: string;
  readonly port: number;
  /** The local address to connect from (distinct loopback addresses are distinct clients behind a proxy). */
  readonly localAddress?: string;
}

/** One request over `agent`; a socket error is an outcome, never a rejection. */
export function send(
  agent: http.Agent,
  target: Target,
  request: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
    let outgoing: http.ClientRequest;
    const fail = (error: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      resolve({
        kind: 'error',
        code: error.code ?? error.message,
        reusedSocket: outgoing?.reusedSocket ?? false,
      });
    };
    try {
      outgoing = http.request(
        {
          host: target.host,
          port: target.port,
          localAddress: target.localAddress,
          method: request.method,
          path: request.path,
          headers,
          agent,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', fail);
          response.on('end', () => {
            if (settled) return;
            settled = true;
            resolve({
              kind: 'answer',
              reusedSocket: outgoing.reusedSocket,
              answer: {
                status: response.statusCode ?? 0,
                headers: response.headers,
                body: Buffer.concat(chunks).toString('utf8'),
              },
            });
          });
        },
      );
    } catch (error) {
      fail(error as NodeJS.ErrnoException);
      return;
    }
    outgoing.setTimeout(15_000, () =>
      outgoing.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
    );
    outgoing.on('error', fail);
    outgoing.end(request.body);
  });
}

/** What a raw socket saw: the answers in order, and how the connection ended. */
export interface RawOutcome {
  readonly answers: Answer[];
  /** 'closed' by a FIN, 'idle' when we stopped waiting on an open connection, else the error code. */
  readonly end: string;
}

/**
 * Writes `bytes` on a new connection and reads answers until the server closes it, or until it
 * has been quiet for `idleMs` after at least one answer (a keep-alive connection left open).
 */
export function sendRaw(
  target: Target,
  bytes: Buffer,
  idleMs = 300,
  timeoutMs = 15_000,
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.host, port: target.port, localAddress: target.localAddress });
    let buffer: Buffer = Buffer.alloc(0);
    const answers: Answer[] = [];
    let idle: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (end: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      clearTimeout(overall);
      answers.push(...parseAnswers(buffer).answers);
      socket.destroy();
      resolve({ answers, end });
    };
    const overall = setTimeout(() => finish('TIMEOUT'), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const parsed = parseAnswers(buffer);
      answers.push(...parsed.answers);
      buffer = parsed.rest;
      clearTimeout(idle);
      if (answers.length > 0) idle = setTimeout(() => finish('idle'), idleMs);
    });
    socket.on('end', () => finish('closed'));
    socket.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? error.message));
    socket.write(bytes);
  });
}

/** Complete `Content-Length` answers at the start of `data`, and what is left. */
function parseAnswers(data: Buffer): { answers: Answer[]; rest: Buffer } {
  const answers: Answer[] = [];
  let rest = data;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine = '', ...lines] = rest.subarray(0, end).toString('latin1').split('\r\n');
    const headers: http.IncomingHttpHeaders = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (rest.length < end + 4 + length) break;
    answers.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: rest.subarray(end + 4, end + 4 + length).toString('utf8'),
    });
    rest = rest.subarray(end + 4 + length);
  }
  return { answers, rest };
}
