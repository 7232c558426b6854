// Seeded hostile requests over every route: odd numbers, NULs, deep JSON, bad encodings, huge headers.

/** mulberry32: a tiny seeded generator, so that a seed names one run exactly. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** Who sends a request: cookies and a CSRF token, real or broken. */
export interface Identity {
  readonly name: string;
  readonly cookie: string | null;
  readonly csrfToken: string | null;
}

/** A request the keep-alive client can send (node:http validates the header bytes it writes). */
export interface FuzzRequest {
  readonly kind: 'http';
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** The bulk request's tasks and assignee when it was well formed, to check the outcome against the database. */
  readonly bulk?: { taskIds: unknown; assigneeId: unknown };
}

/** Bytes written on a socket of their own, for what node:http refuses to send. */
export interface RawRequest {
  readonly kind: 'raw';
  readonly label: string;
  readonly bytes: Buffer;
}

/** Text that JavaScript reads as a number and the database would not, or as no number at all. */
const ODD_NUMBER_TEXT = [
  'Infinity',
  '-Infinity',
  '+Infinity',
  'NaN',
  '1e400',
  '-1e400',
  '1e308',
  '-0',
  '0',
  '-1',
  '2147483647',
  '2147483648',
  '9007199254740993',
  '99999999999999999999999',
  '0x10',
  '0b1',
  '1.5',
  '1.0',
  '1e3',
  ' 1',
  '1 ',
  '',
  'true',
  'null',
  '１',
  '%00',
  '1%00',
  '%F0%9F%98%80',
  '%ED%A0%80',
  '[]',
  '{}',
];

/** JSON values of every wrong kind, as JSON text (so 1e400 and friends survive as written). */
const ODD_JSON = [
  '1e400',
  '-1e400',
  '1e308',
  '-0',
  '0',
  '2147483648',
  '9007199254740993',
  '1.5',
  '"1"',
  '"Infinity"',
  'null',
  'true',
  '[]',
  '{}',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff x"',
  '"\\ud83d\\ude00"',
  `"${'x'.repeat(2000)}"`,
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
];

const EMAILS = [
  'alice@example.com',
  'ALICE@example.com',
  ' bob@example.com ',
  'nobody@example.net',
  'al\u0130ce@example.com',
];
const TEXT_TRAPS = [
  '\u0000',
  'a\u0000',
  '\ud800',
  '\udc00',
  'x\ud800y',
  '\u202e',
  '',
  ' ',
  "' OR 1=1 --",
  '%00',
  '😀',
];

function deepJson(random: Random): string {
  const depth = random.pick([50, 1000, 5000, 20_000]);
  return random.chance(0.5)
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function oddString(random: Random): string {
  const base = random.chance(0.5) ? random.pick(EMAILS) : 'demo-password';
  const trap = random.pick(TEXT_TRAPS);
  const at = random.int(0, base.length);
  return base.slice(0, at) + trap + base.slice(at);
}

/** A JSON value as text: mostly odd, sometimes a plausible one. */
function jsonValue(random: Random, plausible: () => string): string {
  if (random.chance(0.3)) return plausible();
  if (random.chance(0.05)) return deepJson(random);
  if (random.chance(0.3)) return JSON.stringify(oddString(random));
  return random.pick(ODD_JSON);
}

function idText(random: Random): string {
  return random.chance(0.4) ? String(random.int(1, 210)) : random.pick(ODD_NUMBER_TEXT);
}

function jsonObject(random: Random, fields: Record<string, () => string>): string {
  const entries = Object.entries(fields).filter(() => !random.chance(0.1));
  if (random.chance(0.1))
    entries.push([random.pick(['extra', '__proto__', 'constructor', 'taskIds']), () => '1']);
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value()}`).join(',')}}`;
}

/** A body for an unsafe route: a JSON object with odd fields, or something that is no such object at all. */
function body(random: Random, fields: Record<string, () => string>): { text: string; type: string } {
  const roll = random.next();
  if (roll < 0.7) return { text: jsonObject(random, fields), type: 'application/json' };
  if (roll < 0.75) return { text: deepJson(random), type: 'application/json' };
  if (roll < 0.8) return { text: '{"taskIds": [1, 2', type: 'application/json' };
  if (roll < 0.83) return { text: '', type: 'application/json' };
  if (roll < 0.86) return { text: `{"email":"${'a'.repeat(70 * 1024)}"}`, type: 'application/json' };
  if (roll < 0.89) return { text: jsonObject(random, fields), type: 'text/plain' };
  if (roll < 0.92) return { text: 'email=a&password=b', type: 'application/x-www-form-urlencoded' };
  if (roll < 0.95) return { text: jsonObject(random, fields), type: 'application/json; charset=utf-16' };
  if (roll < 0.97) return { text: '\uFEFF{"email":"a","password":"b"}', type: 'application/json' };
  return {
    text: jsonObject(random, fields),
    type: random.pick(['multipart/form-data; boundary=x', 'application/xml', '*/*', 'application/json;;']),
  };
}

function query(random: Random, params: Record<string, () => string>): string {
  const parts = Object.entries(params)
    .filter(() => random.chance(0.5))
    .map(([key, value]) => `${key}=${value()}`);
  if (random.chance(0.1)) parts.push(`${random.pick(Object.keys(params))}=${random.pick(ODD_NUMBER_TEXT)}`);
  if (random.chance(0.05)) parts.push('__proto__[x]=1', 'limit[]=1', 'x=%zz');
  if (random.chance(0.02)) parts.push(...Array.from({ length: 500 }, (_, i) => `p${i}=${i}`));
  return parts.length ? `?${parts.join('&')}` : '';
}

const cursorText = (random: Random) =>
  random.pick([
    Buffer.from(`after:${random.int(0, 300)}`).toString('base64url'),
    Buffer.from('after:99999999999999999').toString('base64url'),
    Buffer.from('after:\u0000').toString('base64url'),
    Buffer.from(`before:${Date.now()}:1`).toString('base64url'),
    '%00',
    '%ED%A0%80',
    'x'.repeat(80),
    'Infinity',
    '',
  ]);

/** A task's writable fields, each mostly odd (docs/rules.md#tasks). */
function taskFields(random: Random): Record<string, () => string> {
  return {
    clientId: () => (random.chance(0.6) ? String(random.int(1, 5)) : jsonValue(random, () => '1')),
    title: () =>
      jsonValue(random, () =>
        JSON.stringify(
          random.pick([
            'Fix it',
            '  padded  ',
            '',
            ' ',
            'x'.repeat(201),
            'tab\there',
            '\u0085',
            '😀'.repeat(200),
          ]),
        ),
      ),
    description: () =>
      jsonValue(random, () =>
        JSON.stringify(random.pick(['', 'a\nb', '<script>alert(1)</script>', 'd'.repeat(10_001)])),
      ),
    status: () =>
      jsonValue(random, () => JSON.stringify(random.pick(['open', 'in_progress', 'done', 'DONE']))),
    priority: () =>
      jsonValue(random, () => JSON.stringify(random.pick(['low', 'normal', 'high', 'urgent', 'none']))),
    dueDate: () =>
      jsonValue(random, () =>
        random.pick([
          'null',
          '"2026-02-28"',
          '"2026-02-29"',
          '"2024-02-29"',
          '"9999-12-31"',
          '"0000-01-01"',
          '"2026-00-10"',
          '"+02026-01-01"',
          '"2026-01-01T00:00:00Z"',
        ]),
      ),
    assigneeId: () =>
      random.chance(0.6) ? random.pick(['null', '1', '2', '3', '4', '999']) : jsonValue(random, () => '2'),
  };
}

/** Every route and a few that are not, each with its own kind of odd input. */
function route(random: Random): {
  method: string;
  path: string;
  body?: { text: string; type: string };
  bulk?: boolean;
  headers?: Record<string, string>;
} {
  const id = () => idText(random);
  switch (random.int(0, 19)) {
    case 0:
      return { method: 'GET', path: '/api/csrf-token' };
    case 1:
    case 2:
      return {
        method: 'POST',
        path: '/api/auth/login',
        body: body(random, {
          email: () => jsonValue(random, () => JSON.stringify(random.pick(EMAILS))),
          password: () =>
            jsonValue(random, () =>
              JSON.stringify(random.pick(['demo-password', 'wrong', 'x'.repeat(1025)])),
            ),
        }),
      };
    case 3:
      return { method: 'GET', path: '/api/auth/me' };
    case 4:
    case 5:
      return {
        method: 'GET',
        path: `/api/employee/tasks${query(random, {
          assigneeId: id,
          clientId: id,
          status: () => random.pick(['open', 'done', 'in_progress', 'OPEN', '%00', '']),
          limit: () => random.pick([...ODD_NUMBER_TEXT, '1', '200', '201']),
          cursor: () => cursorText(random),
        })}`,
      };
    case 6:
      return { method: random.pick(['GET', 'HEAD']), path: `/api/employee/tasks/${id()}` };
    case 7:
      return { method: 'GET', path: '/api/employee/employees' };
    case 8:
    case 9:
      return {
        method: 'PATCH',
        path: '/api/employee/tasks/bulk',
        bulk: true,
        body: body(random, {
          taskIds: () =>
            random.chance(0.5)
              ? `[${Array.from({ length: random.pick([1, 2, 5, 50, 51]) }, () => (random.chance(0.9) ? String(random.int(1, 210)) : random.pick(ODD_JSON))).join(',')}]`
              : jsonValue(random, () => '[1,2,3]'),
          assigneeId: () =>
            random.chance(0.6) ? String(random.pick([2, 3, 4, 1, 5, 999])) : jsonValue(random, () => '2'),
        }),
      };
    case 10:
      return { method: 'GET', path: '/api/rate-limits' };
    case 11:
      return {
        method: 'POST',
        path: '/api/admin/login-locks/reset',
        body: body(random, { email: () => jsonValue(random, () => JSON.stringify(random.pick(EMAILS))) }),
      };
    case 12:
      return { method: 'GET', path: '/api/admin/login-locks' };
    case 13:
      return {
        method: 'GET',
        path: `/api/admin/security-events${query(random, { limit: () => random.pick(ODD_NUMBER_TEXT), cursor: () => cursorText(random) })}`,
      };
    case 14:
      return {
        method: random.pick(['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']),
        path: random.pick([
          '/api/nope',
          '/api/employee/tasks/%zz',
          '/api/%',
          '/api/employee/tasks/%E0%A4%A',
          '/api//employee//tasks',
          '/api/employee/tasks/..%2f..%2fetc',
          `/api/employee/tasks/${'9'.repeat(200)}`,
          '/api/auth/logout',
          '/api/employee/tasks/1/',
        ]),
      };
    case 16:
      return { method: 'POST', path: '/api/employee/tasks', body: body(random, taskFields(random)) };
    case 17:
      // Edits go to tasks the fuzz created (ids past the seed's 200): the seeded ones stay for the bulk check.
      return {
        method: 'PATCH',
        path: `/api/employee/tasks/${random.chance(0.8) ? random.int(201, 230) : id()}`,
        body: body(random, taskFields(random)),
        headers: random.chance(0.9)
          ? {
              'if-match': random.pick([
                '*',
                '"v1"',
                `"v${random.int(1, 5)}"`,
                'W/"v1"',
                '"v1", "v2"',
                '"v99999999999"',
                '"',
                'v1',
                '*, "v1"',
                '"v0"',
                `"v${'9'.repeat(40)}"`,
              ]),
            }
          : {},
      };
    case 18:
      return {
        method: 'GET',
        path: `/api/employee/tasks/${random.chance(0.7) ? random.int(1, 230) : id()}/history${query(random, {
          cursor: () => cursorText(random),
        })}`,
      };
    case 19:
      return {
        method: random.pick(['POST', 'PATCH']),
        path: random.chance(0.5)
          ? '/api/admin/clients'
          : `/api/admin/clients/${random.chance(0.5) ? random.int(1, 6) : id()}`,
        body: body(random, {
          name: () => jsonValue(random, () => JSON.stringify(`Client ${random.int(1, 30)}`)),
        }),
      };
    default:
      return {
        method: 'GET',
        path: random.pick(['/healthz', '/readyz', '/', '/nope', '/%zz', '/docs/json', '/metrics']),
      };
  }
}

/** A cookie header: the identity's own, or a broken one. */
function cookieHeader(random: Random, identity: Identity): string | null {
  if (random.chance(0.9)) return identity.cookie;
  return random.pick([
    'tp_session=%zz',
    'tp_session=',
    `tp_session=${'A'.repeat(43)}.${'B'.repeat(32)}`,
    `tp_session=${'x'.repeat(4000)}`,
    'tp_session="unterminated',
    'tp_session=a; tp_session=b; tp_csrf=c',
    'tp_csrf=%E0%A4%A; tp_session=%',
    ';;;=;=;',
    `${identity.cookie ?? ''}; tp_session=${'z'.repeat(43)}.x`,
  ]);
}

function csrfHeader(random: Random, identity: Identity, other: Identity): string | null {
  const roll = random.next();
  if (roll < 0.75) return identity.csrfToken;
  if (roll < 0.8) return null;
  if (roll < 0.85) return other.csrfToken; // someone else's token
  return random.pick(['', 'x', 'x'.repeat(5000), `${identity.csrfToken ?? ''}x`, '%00', 'null']);
}

/** One request under the keep-alive client. */
export function httpRequest(random: Random, identities: readonly Identity[]): FuzzRequest {
  const chosen = route(random);
  // Logins never carry a signed-in identity: a login with a session cookie ends that session.
  const identity = chosen.path === '/api/auth/login' ? identities[0]! : random.pick(identities);
  const headers: Record<string, string> = { ...chosen.headers };
  const cookie = cookieHeader(random, identity);
  if (cookie) headers.cookie = cookie;
  if (chosen.method !== 'GET' && chosen.method !== 'HEAD') {
    const token = csrfHeader(random, identity, random.pick(identities));
    if (token !== null) headers['x-csrf-token'] = token;
    if (random.chance(0.03)) headers['sec-fetch-site'] = 'cross-site';
    if (random.chance(0.03)) headers.origin = 'https://evil.example';
  }
  if (random.chance(0.03)) headers['x-padding'] = 'p'.repeat(random.pick([8 * 1024, 17 * 1024, 40 * 1024]));
  if (random.chance(0.02)) for (let i = 0; i < 120; i++) headers[`x-many-${i}`] = 'v'.repeat(150);
  if (random.chance(0.03))
    headers['x-forwarded-for'] = random.pick([
      '',
      '::1, 1.2.3.4',
      'not-an-ip',
      '999.1.1.1',
      'a'.repeat(3000),
    ]);
  if (random.chance(0.02)) headers.accept = random.pick(['text/html', 'application/xml', '*/*;q=0']);
  if (random.chance(0.02)) headers['accept-encoding'] = 'gzip, deflate, br, zstd';
  if (random.chance(0.02)) headers['x-request-id'] = random.pick(['', 'x'.repeat(2000), '../../etc']);
  let text: string | undefined;
  if (chosen.body) {
    text = chosen.body.text;
    headers['content-type'] = chosen.body.type;
  }
  // node:http writes only printable ASCII in a target; raw requests send the rest.
  let path = chosen.path.replace(/[^\x21-\x7e]/gu, (character) => encodeURIComponent(character));
  if (random.chance(0.01)) path = `/api/employee/tasks?cursor=${'c'.repeat(random.pick([10_000, 20_000]))}`;
  let bulk: FuzzRequest['bulk'];
  if (chosen.bulk && text !== undefined && headers['content-type'] === 'application/json') {
    try {
      const parsed = JSON.parse(text) as { taskIds?: unknown; assigneeId?: unknown };
      if (parsed && typeof parsed === 'object')
        bulk = { taskIds: parsed.taskIds, assigneeId: parsed.assigneeId };
    } catch {
      bulk = undefined;
    }
  }
  return {
    kind: 'http',
    method: chosen.method,
    path,
    headers,
    ...(text === undefined ? {} : { body: text }),
    ...(bulk ? { bulk } : {}),
  };
}

const VALID = 'GET /api/rate-limits HTTP/1.1\r\nHost: fuzz\r\n\r\n';

/** What only a raw socket can send: request lines, bytes and framings Node's client would refuse to write. */
export function rawRequest(random: Random): RawRequest {
  const cases: [string, () => string | Buffer][] = [
    ['garbage request line', () => 'HELLO\r\n\r\n'],
    ['unknown method', () => 'BREW /api/rate-limits HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['space in the target', () => 'GET /api/employee tasks HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['HTTP/9.9', () => 'GET /api/rate-limits HTTP/9.9\r\nHost: x\r\n\r\n'],
    [
      'NUL in a header value',
      () => 'GET /api/auth/me HTTP/1.1\r\nHost: x\r\nCookie: tp_session=a\u0000b\r\n\r\n',
    ],
    ['NUL in the target', () => 'GET /api/employee/tasks/1\u0000 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['bad header name', () => 'GET /api/rate-limits HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'],
    ['header line without a colon', () => 'GET /api/rate-limits HTTP/1.1\r\nHost: x\r\nnocolon\r\n\r\n'],
    ['bare LF line ends', () => 'GET /api/rate-limits HTTP/1.1\nHost: x\n\n'],
    [
      'two Content-Lengths',
      () =>
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ],
    [
      'Content-Length and chunked (smuggling)',
      () =>
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'bad chunk size',
      () =>
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
    ],
    [
      'negative Content-Length',
      () => 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
    ],
    [
      'huge Content-Length',
      () =>
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999\r\n\r\n',
    ],
    [
      'headers over 16 KiB',
      () => `GET /api/rate-limits HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20 * 1024)}\r\n\r\n`,
    ],
    [
      'URL over 16 KiB',
      () => `GET /api/employee/tasks?cursor=${'c'.repeat(20 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    ],
    ['valid, then garbage (pipelined)', () => `${VALID}NOT HTTP AT ALL\r\n\r\n`],
    [
      'valid, valid, then oversized (pipelined)',
      () => `${VALID}${VALID}GET / HTTP/1.1\r\nX-Big: ${'b'.repeat(20 * 1024)}\r\n\r\n`,
    ],
    [
      'invalid UTF-8 in the target',
      () =>
        Buffer.concat([
          Buffer.from('GET /api/employee/tasks/'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
        ]),
    ],
    ['obsolete line folding', () => 'GET /api/rate-limits HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n  b\r\n\r\n'],
  ];
  const [label, make] = random.pick(cases);
  const made = make();
  return { kind: 'raw', label, bytes: typeof made === 'string' ? Buffer.from(made, 'latin1') : made };
}
