// Memory per tracked key: one process per store, 1,000,000 distinct keys consumed once, heap delta per key.
// Run: node --expose-gc bench/experiments/memory-per-key.ts [store]   (no store: all, one child each)
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MemoryStore as ExpressMemoryStore, type Options as ExpressOptions } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { systemClock } from '../../src/clock.ts';
import { MemoryStore } from '../../src/rate-limit/stores/memory-store.ts';

type Consume = (key: string) => unknown;

interface MemoryResult {
  readonly store: string;
  readonly budget: string;
  readonly keys: number;
  readonly bytesPerKey: number;
  readonly note?: string;
}

const WINDOW_MS = 15 * 60_000;
const require = createRequire(import.meta.url);
type LocalStoreClass = new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache: number,
) => { incr(key: string, cb: (error: Error | null) => void, timeWindow: number, max: number): void };

/** Each store under test: how to make it, and one consume of a key (sync or promise). */
const STORES: Record<string, { budget: string; note?: string; make: (keys: number) => Consume }> = {
  'ours-30': { budget: '30/15m (exact log)', make: () => ours(30) },
  'ours-100': { budget: '100/15m (buckets)', make: () => ours(100) },
  'ours-1000': { budget: '1000/15m (buckets)', make: () => ours(1000) },
  'express-rate-limit': {
    budget: '1000/15m',
    make: () => {
      const store = new ExpressMemoryStore();
      store.init({ windowMs: WINDOW_MS } as ExpressOptions);
      return (key) => store.increment(key);
    },
  },
  'fastify-rate-limit': {
    budget: '1000/15m',
    note: 'LRU sized to hold every key (its default 5000 would forget counters)',
    make: (keys) => {
      const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreClass;
      const store = new LocalStore(false, false, keys);
      return (key) => store.incr(key, () => {}, WINDOW_MS, 1000);
    },
  },
  'rate-limiter-flexible': {
    budget: '1000/15m',
    note: 'one timer per key',
    make: () => {
      const limiter = new RateLimiterMemory({ points: 1000, duration: WINDOW_MS / 1000 });
      return (key) => limiter.consume(key);
    },
  },
};

function ours(limit: number): Consume {
  const store = new MemoryStore({ clock: systemClock, sweepIntervalMs: 0 });
  const rule = Object.freeze({ name: 'api-authenticated', limit, windowMs: WINDOW_MS });
  return (key) => store.consume(rule, key);
}

function used(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  const memory = process.memoryUsage();
  // Typed arrays live outside the V8 heap: `external` counts their backing stores.
  return memory.heapUsed + memory.external;
}

async function measureStore(name: string, keys: number): Promise<MemoryResult> {
  const spec = STORES[name];
  if (!spec) throw new Error(`unknown store ${name}; one of ${Object.keys(STORES).join(', ')}`);
  const before = used();
  const consume = spec.make(keys);
  for (let i = 0; i < keys; i++) {
    const answer = consume(String(i));
    if (answer instanceof Promise) await answer;
  }
  const after = used();
  consume('keep-alive'); // the store must still be reachable when the heap is measured
  return { store: name, budget: spec.budget, keys, bytesPerKey: (after - before) / keys, note: spec.note };
}

/** Measures every store, each in a fresh process so no store inherits another's heap. */
function measureAll(keys: number, core: number | null): MemoryResult[] {
  const file = fileURLToPath(import.meta.url);
  return Object.keys(STORES).map((name) => {
    const args = ['--expose-gc', '--max-old-space-size=4096', file, name];
    const command = core === null ? process.execPath : 'taskset';
    const output = execFileSync(
      command,
      core === null ? args : ['-c', String(core), process.execPath, ...args],
      {
        env: { ...process.env, BENCH_MEMORY_KEYS: String(keys) },
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      },
    );
    return JSON.parse(output.trim().split('\n').at(-1)!) as MemoryResult;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const keys = Number(process.env.BENCH_MEMORY_KEYS) || 1_000_000;
  const name = process.argv[2];
  if (name) {
    console.log(JSON.stringify(await measureStore(name, keys)));
  } else {
    for (const result of measureAll(keys, null))
      console.log(
        `${result.store.padEnd(24)} ${result.budget.padEnd(20)} ${result.bytesPerKey.toFixed(0)} B/key`,
      );
  }
}
