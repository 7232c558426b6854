// What the password rules' list and estimator cost when a password is set, and what is left once they are let
// go.
// Run: node --expose-gc bench/experiments/password-screening.ts
import { mock } from 'node:test';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** Heap in use after two full collections, and RSS, in MB. */
function memory(): { heapMB: number; rssMB: number } {
  gc!();
  gc!();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapMB: Math.round(heapUsed / 1e5) / 10, rssMB: Math.round(rss / 1e5) / 10 };
}

// The release timer is the rules' own setTimeout: mocked, 5 idle minutes pass at once.
mock.timers.enable({ apis: ['setTimeout'] });
const { offlineRefusal } = await import('../../src/auth/password-rules.ts');
const rows: Record<string, unknown>[] = [];
rows.push({ step: 'module loaded, nothing screened', ...memory() });
let started = performance.now();
offlineRefusal('copper kettle in the orchard', 'person@example.com');
rows.push({ step: 'first password screened', ms: Math.round(performance.now() - started), ...memory() });
started = performance.now();
for (const password of ['abcabcabcabc', 'plum orbit lantern 47 quietly', '!password1234'])
  offlineRefusal(password, 'person@example.com');
rows.push({ step: 'three more', ms: Math.round(performance.now() - started), ...memory() });
mock.timers.tick(5 * 60 * 1000);
rows.push({ step: 'after 5 idle minutes (let go)', ...memory() });
started = performance.now();
offlineRefusal('copper kettle in the orchard', 'person@example.com');
rows.push({ step: 'screened again (reloaded)', ms: Math.round(performance.now() - started), ...memory() });
console.table(rows);
