// The Lua scripts of the Redis store: sliding-window.ts line for line, one script (one round trip) per operation.
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
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
 * stored time reads back as the same number.
 *
 * Common ARGV: kind ('log' | 'buckets'), limit, windowMs, bucketMs. Times are whole milliseconds.
 */
/** Part of every key: a deployment whose code stores another layout must not read this one. */
export const LAYOUT_VERSION = `v3.${BUCKETS}`;

const COMMON = `
local kind = ARGV[1]
local limit = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local bucketMs = tonumber(ARGV[4])
local RING = ${RING}
local NEG_INF = -math.huge

local function ringSlot(b)
  -- Lua's % floors (like ringSlot in sliding-window.ts), so negative buckets land in 0..RING-1.
  return b % RING + 1
end

-- since is when the state began (the first admission while the key was absent); a token older
-- than that belongs to a reset or expired past, and release ignores it (memory-store.ts keeps the
-- same per slot).
local function save(key, value, ttl)
  if ttl then
    redis.call('SET', key, value, 'PX', ttl)
  else
    redis.call('SET', key, value, 'KEEPTTL')
  end
end

-- log: since, then the finite admission times, all doubles.
local function loadLog(key)
  local raw = redis.call('GET', key)
  local state = { since = nil, times = {} }
  if raw then
    local n = math.min(math.floor(#raw / 8), limit + 1)
    -- unpack's last value is the position after the data: ignored (indexes stop at n).
    local numbers = { struct.unpack('<' .. string.rep('d', n), raw) }
    state.since = numbers[1]
    for i = 2, n do state.times[i - 1] = numbers[i] end
  end
  for i = #state.times + 1, limit do state.times[i] = NEG_INF end
  return state
end

local function saveLog(key, state, ttl)
  local numbers = { state.since }
  for i = 1, limit do
    if state.times[i] ~= NEG_INF then numbers[#numbers + 1] = state.times[i] end
  end
  save(key, struct.pack('<' .. string.rep('d', #numbers), unpack(numbers)), ttl)
end

-- buckets: since and the head (doubles), then the RING counters (the narrowest unsigned width).
local COUNTER = limit < 256 and 'I1' or (limit < 65536 and 'I2' or 'I4')
local BUCKETS_FORMAT = '<dd' .. string.rep(COUNTER, RING)

local function loadBuckets(key)
  local raw = redis.call('GET', key)
  local state = { since = nil, head = NEG_INF, counts = {} }
  if raw then
    local numbers = { struct.unpack(BUCKETS_FORMAT, raw) }
    state.since = numbers[1]
    state.head = numbers[2]
    for i = 1, RING do state.counts[i] = numbers[i + 2] end
  else
    for i = 1, RING do state.counts[i] = 0 end
  end
  return state
end

local function saveBuckets(key, state, ttl)
  save(key, struct.pack(BUCKETS_FORMAT, state.since, state.head, unpack(state.counts, 1, RING)), ttl)
end
`;

/**
 * consume / peek. Extra ARGV: consume ('1' | '0'), horizonMs, now ('' = take it from Redis TIME).
 * Replies {allowed 0|1, remaining, resetMs, token}; token is the admission time, -1 when none.
 */
const DECIDE = `${COMMON}
local consume = ARGV[5] == '1'
local horizonMs = tonumber(ARGV[6])
local now = tonumber(ARGV[7])
if not now then
  -- Redis's clock, not the caller's: instances with skewed clocks still share one window.
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local key = KEYS[1]

if kind == 'log' then
  -- decideLog
  local state = loadLog(key)
  local times = state.times
  local horizon = now - windowMs
  local live = 0
  local oldest = 1
  for i = 1, limit do
    local t = times[i]
    if t > horizon then live = live + 1 end
    if t < times[oldest] then oldest = i end
  end
  if live >= limit then return { 0, 0, times[oldest] + windowMs - now, -1 } end
  if not consume then return { 1, limit - live, 0, -1 } end
  times[oldest] = now
  state.since = state.since or now
  saveLog(key, state, horizonMs)
  if live + 1 < limit then return { 1, limit - live - 1, 0, now } end
  local nxt = times[1]
  for i = 2, limit do if times[i] < nxt then nxt = times[i] end end
  return { 1, 0, nxt + windowMs - now, now }
end

-- decideBuckets
local state = loadBuckets(key)
local counts = state.counts
local current = math.floor(now / bucketMs)
-- advance: zero the slots of the buckets between the last one written and the current one.
if current > state.head then
  if current - state.head >= RING then
    for i = 1, RING do counts[i] = 0 end
  else
    for b = state.head + 1, current do counts[ringSlot(b)] = 0 end
  end
  state.head = current
end
local first = math.floor((now - windowMs) / bucketMs)
local used = 0
for b = first, current do used = used + counts[ringSlot(b)] end

-- bucketResetMs: walk from the oldest counted bucket until enough have left the window.
local function resetMs(inUse)
  local b = first
  while true do
    inUse = inUse - counts[ringSlot(b)]
    if inUse < limit then return math.max(0, (b + 1) * bucketMs + windowMs - now) end
    b = b + 1
  end
end

if used >= limit then return { 0, 0, resetMs(used), -1 } end
if not consume then return { 1, limit - used, 0, -1 } end
counts[ringSlot(current)] = counts[ringSlot(current)] + 1
used = used + 1
state.since = state.since or now
saveBuckets(key, state, horizonMs)
if used < limit then return { 1, limit - used, 0, now } end
return { 1, 0, resetMs(used), now }
`;

/** release. Extra ARGV: the token (admission time). Replies 1 when taken back, 0 when it was gone. */
const RELEASE = `${COMMON}
local at = tonumber(ARGV[5])
local key = KEYS[1]

if kind == 'log' then
  -- releaseLog
  local state = loadLog(key)
  if not state.since or at < state.since then return 0 end
  for i = 1, limit do
    if state.times[i] == at then
      state.times[i] = NEG_INF
      saveLog(key, state, nil)
      return 1
    end
  end
  return 0
end

-- releaseBuckets
local state = loadBuckets(key)
if not state.since or at < state.since then return 0 end
local bucket = math.floor(at / bucketMs)
local slot = ringSlot(bucket)
if bucket > state.head or bucket <= state.head - RING or state.counts[slot] <= 0 then return 0 end
state.counts[slot] = state.counts[slot] - 1
saveBuckets(key, state, nil)
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

export interface Script {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

function script(name: string, lua: string): Script {
  return { name, lua, sha: createHash('sha1').update(lua).digest('hex') };
}

export const SCRIPTS = {
  decide: script('decide', DECIDE),
  release: script('release', RELEASE),
  reset: script('reset', RESET),
  noteLock: script('noteLock', NOTE_LOCK),
  locks: script('locks', LOCKS),
} as const;

/** The ARGV prefix every script shares: the window's shape. */
export function shapeArgs(shape: WindowShape): (string | number)[] {
  return [shape.kind, shape.limit, shape.windowMs, shape.bucketMs];
}

/**
 * Runs a script by SHA; only when the server answers NOSCRIPT (after a restart, a failover, a
 * SCRIPT FLUSH) is the source sent with EVAL, which also caches it for the next EVALSHA.
 */
export function runScript(
  client: Redis | Cluster,
  { sha, lua }: Script,
  key: string,
  args: readonly (string | number)[],
): Promise<unknown> {
  return client.evalsha(sha, 1, key, ...args).catch((error: unknown) => {
    if (isNoScript(error)) return client.eval(lua, 1, key, ...args);
    throw error;
  });
}

/** Whether Redis answered that it does not know the script's SHA (so its source must be sent). */
export function isNoScript(error: unknown): boolean {
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
  if (!Array.isArray(reply) || reply.length !== 4 || !reply.every(Number.isSafeInteger))
    throw malformed('decide', reply);
  const [allowed, remaining, resetMs, token] = reply as number[];
  const recorded = consume && allowed === 1;
  const ok =
    (allowed === 0 || allowed === 1) &&
    remaining! >= 0 &&
    remaining! <= shape.limit &&
    resetMs! >= 0 &&
    (recorded ? token! >= 0 : token === -1) &&
    (allowed === 1 || remaining === 0);
  if (!ok) throw malformed('decide', reply);
  return {
    allowed: allowed === 1,
    remaining: remaining!,
    resetMs: resetMs!,
    token: recorded ? token! : null,
  };
}

/** Checks a reply that must be 0 or 1 (release, and reset's DEL count). */
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
