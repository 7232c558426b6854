// The Redis store's Lua scripts: sliding-window.ts's decisions, one script (one round trip) each.
import { createHash } from 'node:crypto';
import { BUCKETS, RING, type WindowShape } from '../sliding-window.ts';
import { StoreUnavailableError } from './store.ts';

/*
 * Every script touches exactly one key, the state of one (rule, key) pair, stored as one binary
 * string (Redis's bundled `struct` library) so that a decision is GET + compute + SET inside one
 * script, with one C call to read the state and one to write it (no text to split, parse or format):
 *
 * - log: little-endian doubles: `since`, then the finite admission times (up to `limit`; a missing
 *   entry is a free slot, -Infinity in sliding-window.ts). Decisions only depend on the multiset of
 *   times, so order does not matter.
 * - buckets: doubles `since` and the head (newest bucket written), then the RING counters (ring
 *   position = bucket mod RING) as unsigned integers of 1, 2 or 4 bytes, the narrowest that holds
 *   the limit (a counter never exceeds it; limits are below 10^9).
 *
 * `since` is the time the key's state began (see release). Doubles hold every time exactly, so a
 * stored time reads back as the same number. Times are whole milliseconds.
 *
 * The decide and release scripts are written per window shape (shapeScripts): the shape's numbers
 * are constants of the text, so a decision sends the key alone (and a test clock's time). Each
 * argument costs the client a length, five string joins and its share of the flattened command
 * (ioredis' Command.toWritable), so fewer arguments are fewer instructions a request (measured:
 * BENCHMARKS.md).
 */
/** Part of every key: a deployment whose code stores another layout must not read this one. */
export const LAYOUT_VERSION = `v3.${BUCKETS}`;

/*
 * The scripts are written for the cost of a run, which Redis pays per decision (usec_per_call in
 * INFO commandstats, BENCHMARKS.md): no function is defined on the decision path (a closure per
 * run), a state is decoded into one table and changed in place, ring slots are computed inline,
 * and the buckets' struct formats are constants of this file. The snippets below are shared text, so the
 * decide and release scripts read and write a layout in one way.
 */
const ZEROS = Array.from({ length: RING }, () => '0').join(', ');
/** Counters of 1, 2 or 4 bytes: the narrowest unsigned width that holds the limit. */
const bucketsFormat = (width: 1 | 2 | 4): string => `'<dd${`I${width}`.repeat(RING)}'`;

/** The first lines of a shape's scripts: its numbers, as constants. */
const shapeHeader = (shape: WindowShape): string => `
local key = KEYS[1]
local limit = ${shape.limit}
local windowMs = ${shape.windowMs}
local bucketMs = ${shape.bucketMs}
`;

/**
 * Buckets: `s` is { since, head, counter of ring slot 0, … slot RING-1 }; the counter of bucket b
 * is s[b % RING + 3] (Lua's % floors, like ringSlot in sliding-window.ts, so a negative bucket
 * lands in the ring too). A missing key is { nil, -huge, 0, … }.
 */
const loadBuckets = (limit: number): string => `
local fmt = ${bucketsFormat(limit < 256 ? 1 : limit < 65536 ? 2 : 4)}
local raw = redis.call('GET', key)
local s
if raw then s = { struct.unpack(fmt, raw) } else s = { nil, -math.huge, ${ZEROS} } end
`;
const bucketsPacked = `struct.pack(fmt, unpack(s, 1, ${RING + 2}))`;

/**
 * Log: `s` is { since, the finite admission times… } and `n` the number of times (a missing
 * entry is a free slot: -Infinity in sliding-window.ts). At most `limit` are read back.
 */
const LOAD_LOG = `
local raw = redis.call('GET', key)
local s
local n = 0
if raw and #raw >= 8 then
  local numbers = math.min(math.floor(#raw / 8), limit + 1)
  s = { struct.unpack('<' .. string.rep('d', numbers), raw) }
  s[numbers + 1] = nil -- unpack's last value is the position after the data
  n = numbers - 1
else
  s = {}
end
`;
const logPacked = "struct.pack('<' .. string.rep('d', n + 1), unpack(s, 1, n + 1))";

/**
 * since is when the state began (the first admission while the key was absent); a token older
 * than that belongs to a reset or expired past, and release ignores it (memory-store.ts keeps the
 * same per slot). A decision sets the key's expiry; a release keeps it.
 */
const saveWithTtl = (packed: string): string => `redis.call('SET', key, ${packed}, 'PX', horizonMs)`;
const saveKeepTtl = (packed: string): string => `redis.call('SET', key, ${packed}, 'KEEPTTL')`;

/** bucketResetMs, inline: from the oldest counted bucket until enough have left the window. */
const BUCKETS_RESET_MS = `
local inUse = used
local b = first
while true do
  inUse = inUse - s[b % ${RING} + 3]
  if inUse < limit then break end
  b = b + 1
end
local resetMs = math.max(0, (b + 1) * bucketMs + windowMs - now)
`;

/** The decide script's reply: four integers (`%d` prints a double of up to 2^63 without exponent). */
const DECISION = "'%d,%d,%d,%d'";

/**
 * consume / peek of one shape. ARGV: now (absent = take it from Redis TIME: instances with skewed
 * clocks still share one window; a test passes its clock's time). Replies
 * "allowed,remaining,resetMs,token" (allowed 0|1; token is the admission time, -1 when none): one
 * string, because the client decodes a reply of four integers at about three times the cost of
 * one string, and a decision's reply is read on every request (BENCHMARKS.md).
 */
const decideLua = (shape: WindowShape, consume: boolean): string => `${shapeHeader(shape)}
local consume = ${consume}
local horizonMs = ${shape.horizonMs}
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
${shape.kind === 'log' ? DECIDE_LOG : decideBuckets(shape.limit)}`;

/** decideLog over the n finite times; the free slots (limit - n of them) are the oldest of all. */
const DECIDE_LOG = `
${LOAD_LOG}
local horizon = now - windowMs
local live = 0
local oldest = 2
for i = 2, n + 1 do
  local t = s[i]
  if t > horizon then live = live + 1 end
  if t < s[oldest] then oldest = i end
end
if live >= limit then return string.format(${DECISION}, 0, 0, s[oldest] + windowMs - now, -1) end
if not consume then return string.format(${DECISION}, 1, limit - live, 0, -1) end
-- A free slot if there is one, else the oldest time (expired: fewer than limit are live).
if n < limit then
  n = n + 1
  oldest = n + 1
end
s[oldest] = now
s[1] = s[1] or now
${saveWithTtl(logPacked)}
if live + 1 < limit then return string.format(${DECISION}, 1, limit - live - 1, 0, now) end
-- All limit slots are live now: the next admission waits for the oldest of them.
local nxt = s[2]
for i = 3, n + 1 do if s[i] < nxt then nxt = s[i] end end
return string.format(${DECISION}, 1, 0, nxt + windowMs - now, now)
`;

/** sliding-window.ts' decideBuckets: decides at `now`; when `consume` and admitted, counts it in the current bucket. */
const decideBuckets = (limit: number): string => `
${loadBuckets(limit)}
local current = math.floor(now / bucketMs)
-- advance: zero the slots of the buckets between the last one written and the current one.
local head = s[2]
if current > head then
  if current - head >= ${RING} then
    for i = 3, ${RING + 2} do s[i] = 0 end
  else
    for b = head + 1, current do s[b % ${RING} + 3] = 0 end
  end
  s[2] = current
end
local first = math.floor((now - windowMs) / bucketMs)
local used = 0
for b = first, current do used = used + s[b % ${RING} + 3] end

if used >= limit then
  ${BUCKETS_RESET_MS}
  return string.format(${DECISION}, 0, 0, resetMs, -1)
end
if not consume then return string.format(${DECISION}, 1, limit - used, 0, -1) end
local slot = current % ${RING} + 3
s[slot] = s[slot] + 1
used = used + 1
s[1] = s[1] or now
${saveWithTtl(bucketsPacked)}
if used < limit then return string.format(${DECISION}, 1, limit - used, 0, now) end
${BUCKETS_RESET_MS}
return string.format(${DECISION}, 1, 0, resetMs, now)
`;

/** release of one shape. ARGV: the token (admission time). Replies 1 when taken back, 0 when it was gone. */
const releaseLua = (shape: WindowShape): string => `${shapeHeader(shape)}
local at = tonumber(ARGV[1])
${shape.kind === 'log' ? RELEASE_LOG : releaseBuckets(shape.limit)}`;

/** releaseLog: the time leaves the log (its slot becomes free). */
const RELEASE_LOG = `
${LOAD_LOG}
if not s[1] or at < s[1] then return 0 end
for i = 2, n + 1 do
  if s[i] == at then
    s[i] = s[n + 1]
    s[n + 1] = nil
    n = n - 1
    ${saveKeepTtl(logPacked)}
    return 1
  end
end
return 0
`;

/** sliding-window.ts' releaseBuckets: un-counts one admission made at `at`, if its bucket is still held. */
const releaseBuckets = (limit: number): string => `
${loadBuckets(limit)}
if not s[1] or at < s[1] then return 0 end
local bucket = math.floor(at / bucketMs)
local slot = bucket % ${RING} + 3
if bucket > s[2] or bucket <= s[2] - ${RING} or s[slot] <= 0 then return 0 end
s[slot] = s[slot] - 1
${saveKeepTtl(bucketsPacked)}
return 1
`;

/** reset: forgets the key. A script too, so every operation goes through the same checked path. */
const RESET = `
return redis.call('DEL', KEYS[1])
`;

/*
 * The lock index of a rule: one sorted set, member = the caller's key, score = when its noted lock
 * ends (ms, Redis's clock unless a test passes one). One key per rule, so on a cluster it lives in
 * one slot, apart from the keys' states: noting a lock is its own round trip, made only when a
 * failure fills a budget, never on the path of an ordinary decision.
 */
const CLOCK = `
local function clockNow(given)
  local now = tonumber(given)
  if now then return now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * noteLock. ARGV: member, resetMs, ttlMs (the rule's horizon: no noted lock ends later than that
 * from now, so the set outlives every entry), now ('' = Redis TIME). Replies 1.
 */
const NOTE_LOCK = `${CLOCK}
local now = clockNow(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

/** locks. ARGV: max, now ('' = Redis TIME). Replies {member, resetMs, …}, latest end first. */
const LOCKS = `${CLOCK}
local now = clockNow(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local entries = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local reply = {}
for i = 1, #entries, 2 do
  reply[#reply + 1] = entries[i]
  reply[#reply + 1] = tonumber(entries[i + 1]) - now
end
return reply
`;

/**
 * claimOnce. KEYS[1]: the series' record, a bitmap (tagged apart from every rule's state). ARGV:
 * slot, ttlMs. Sets the slot's bit; the key is kept at least ttlMs (never shortened). Replies 1 for
 * the first claim of the slot, 0 for every later one.
 */
const CLAIM_ONCE = `
local was = redis.call('SETBIT', KEYS[1], ARGV[1], 1)
local ttl = tonumber(ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1 - was
`;

/*
 * Single-use marks, per scope two keys under one hash tag (one cluster slot): a hash, holder →
 * "<expiresAt>:<mark>" (ms, Redis's clock unless a test passes one), and a sorted set, holder by
 * when its mark expires, which counts the live marks and finds the first to end. Both keys expire
 * with the latest mark, so an idle scope leaves by itself.
 */

/**
 * putOnce. KEYS: the hash, the sorted set. ARGV: holder, mark, ttlMs, max, now ('' = Redis TIME).
 * Ended marks leave a bounded number per run (no run does more than a few removals). A holder
 * with no live mark is refused while `max` marks live: nothing changes, and the reply is the ms
 * until the first live one ends (at least 1). Else the holder's mark is replaced; replies 0.
 */
const PUT_ONCE = `${CLOCK}
local now = clockNow(ARGV[5])
local ended = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 64)
if #ended > 0 then
  redis.call('ZREM', KEYS[2], unpack(ended))
  redis.call('HDEL', KEYS[1], unpack(ended))
end
local ends = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
if not (ends and ends > now) then
  local live = redis.call('ZCARD', KEYS[2]) - redis.call('ZCOUNT', KEYS[2], '-inf', now)
  if live >= tonumber(ARGV[4]) then
    local first = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'LIMIT', 0, 1, 'WITHSCORES')
    return math.max(1, tonumber(first[2]) - now)
  end
end
local ttl = tonumber(ARGV[3])
local expiresAt = now + ttl
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', expiresAt) .. ':' .. ARGV[2])
redis.call('ZADD', KEYS[2], expiresAt, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 0
`;

/**
 * takeOnce. KEYS: the hash, the sorted set. ARGV: holder, mark, now ('' = Redis TIME). Replies 1
 * when the holder's mark was `mark` and unexpired, else 0; a matching mark is gone either way,
 * another one stays. Read and delete in one script: two takers can never both see it.
 */
const TAKE_ONCE = `${CLOCK}
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local colon = string.find(value, ':', 1, true)
if not colon or string.sub(value, colon + 1) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if tonumber(string.sub(value, 1, colon - 1)) > clockNow(ARGV[3]) then return 1 end
return 0
`;

export interface Script {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

function script(name: string, lua: string): Script {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** The scripts of one window shape (the Redis store makes them once per rule). */
export interface ShapeScripts {
  readonly consume: Script;
  readonly peek: Script;
  readonly release: Script;
}

export function shapeScripts(shape: WindowShape): ShapeScripts {
  return {
    consume: script('consume', decideLua(shape, true)),
    peek: script('peek', decideLua(shape, false)),
    release: script('release', releaseLua(shape)),
  };
}

/** The scripts whose text is the same for every rule. */
export const SCRIPTS = {
  reset: script('reset', RESET),
  noteLock: script('noteLock', NOTE_LOCK),
  locks: script('locks', LOCKS),
  claimOnce: script('claimOnce', CLAIM_ONCE),
  putOnce: script('putOnce', PUT_ONCE),
  takeOnce: script('takeOnce', TAKE_ONCE),
} as const;

/** Sends one command and resolves with its reply (the Redis store's one command path). */
export type SendCommand = (name: string, args: string[]) => Promise<unknown>;

/**
 * Runs a script by SHA; only when the server answers NOSCRIPT (after a restart, a failover, a
 * SCRIPT FLUSH) is the source sent with EVAL, which also caches it for the next EVALSHA.
 */
export function runScript(
  send: SendCommand,
  { sha, lua }: Script,
  keys: string | readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const argv = typeof keys === 'string' ? [sha, '1', keys] : [sha, String(keys.length), ...keys];
  for (const arg of args) argv.push(String(arg));
  return send('evalsha', argv).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    argv[0] = lua;
    return send('eval', argv);
  });
}

/** Whether Redis answered that it does not know the script's SHA (so its source must be sent). */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

export interface ScriptDecision {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  /** The admission time, when one was recorded. */
  readonly token: number | null;
}

/** Checks the decide script's reply; anything unexpected is a store failure, never a decision. */
export function parseDecision(reply: unknown, shape: WindowShape, consume: boolean): ScriptDecision {
  const fields = typeof reply === 'string' ? readFields(reply) : null;
  if (fields === null) throw malformed('decide', reply);
  const [allowed, remaining, resetMs, token] = fields as [number, number, number, number];
  const recorded = consume && allowed === 1;
  const ok =
    (allowed === 0 || allowed === 1) &&
    remaining >= 0 &&
    remaining <= shape.limit &&
    resetMs >= 0 &&
    (recorded ? token >= 0 : token === -1) &&
    (allowed === 1 || remaining === 0);
  if (!ok) throw malformed('decide', reply);
  return { allowed: allowed === 1, remaining, resetMs, token: recorded ? token : null };
}

/**
 * The decide reply's fields, or null: exactly four comma-separated integers, each an optional
 * minus and 1 to 16 digits and a safe integer, nothing else (not '', ' 1' or '1e3', which Number() would take).
 * One pass over the characters: this runs once per request on Redis, where splitting the reply
 * and testing each field with a regular expression cost more (measured: BENCHMARKS.md).
 */
function readFields(reply: string): number[] | null {
  const fields: number[] = [];
  let at = 0;
  for (let field = 0; field < 4; field++) {
    if (field > 0) {
      if (reply.charCodeAt(at) !== COMMA) return null;
      at++;
    }
    const negative = reply.charCodeAt(at) === MINUS;
    if (negative) at++;
    const first = at;
    let value = 0;
    for (let code = reply.charCodeAt(at); code >= ZERO && code <= NINE; code = reply.charCodeAt(++at))
      value = value * 10 + (code - ZERO);
    // Past 2^53 the sum is no longer exact, but it stays past it: such a field is refused.
    if (at === first || at - first > 16 || !Number.isSafeInteger(value)) return null;
    fields.push(negative ? -value : value);
  }
  return at === reply.length ? fields : null;
}
const COMMA = 44;
const MINUS = 45;
const ZERO = 48;
const NINE = 57;

/** Checks putOnce's reply: 0 (kept) or the positive ms until room. */
export function parseWait(name: string, reply: unknown): number {
  if (!Number.isSafeInteger(reply) || (reply as number) < 0) throw malformed(name, reply);
  return reply as number;
}

/** Checks a reply that must be 0 or 1 (release, reset's DEL count, the single-use marks, claims). */
export function parseFlag(name: string, reply: unknown): boolean {
  if (reply !== 0 && reply !== 1) throw malformed(name, reply);
  return reply === 1;
}

/** Checks the locks script's reply: pairs of a key and a positive number of ms. */
export function parseLocks(reply: unknown): { key: string; resetMs: number }[] {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) throw malformed('locks', reply);
  const entries: { key: string; resetMs: number }[] = [];
  for (let i = 0; i < reply.length; i += 2) {
    const [key, resetMs] = [reply[i], reply[i + 1]];
    if (typeof key !== 'string' || !Number.isSafeInteger(resetMs) || (resetMs as number) <= 0)
      throw malformed('locks', reply);
    entries.push({ key, resetMs: resetMs as number });
  }
  return entries;
}

function malformed(name: string, reply: unknown): StoreUnavailableError {
  return new StoreUnavailableError(
    `Redis answered the ${name} script with an unexpected reply: ${preview(reply)}`,
  );
}

function preview(reply: unknown): string {
  const text = JSON.stringify(reply) ?? String(reply);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
