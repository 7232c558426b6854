// deploy/prometheus/ as shipped: promtool's checks and rule tests; series served, compose's targets.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestApp } from '../helpers/app.ts';
import { closeTestDatabases } from '../helpers/database.ts';
import { scrapeMetrics } from '../helpers/metrics.ts';
import {
  promtool,
  SHIPPED_ALERT_TESTS,
  SHIPPED_ALERTS,
  SHIPPED_PROMETHEUS_CONF,
  skipUnlessInstalled,
} from '../helpers/prometheus.ts';

after(closeTestDatabases);

const skip = skipUnlessInstalled('promtool');
const read = (file: string) => readFile(file, 'utf8');
const repositoryFile = (name: string) => fileURLToPath(new URL(`../../${name}`, import.meta.url));

/** Each rule of alerts.yml as its lines: `alert` or `record` with its name, and its text. */
async function rules(): Promise<{ kind: 'alert' | 'record'; name: string; text: string }[]> {
  const blocks = (await read(SHIPPED_ALERTS)).split(/\n(?= +- (?:alert|record): )/).slice(1);
  return blocks.map((block) => {
    const [, kind, name] = /^ +- (alert|record): (\S+)/.exec(block)!;
    // The block ends where the next comment or rule begins.
    return { kind: kind as 'alert' | 'record', name: name!, text: block.split(/\n\n/)[0]! };
  });
}

/** The PromQL of a rule: its `expr`, on the key's line or folded below it (the lines indented further). */
function exprOf(text: string): string {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => /^ +expr: /.test(line));
  assert.ok(at >= 0, text);
  const indent = lines[at]!.indexOf('expr:');
  const folded = lines
    .slice(at + 1)
    .filter((_, i, rest) => rest.slice(0, i + 1).every((line) => line.search(/\S/) > indent));
  return [lines[at]!.slice(indent + 'expr:'.length).replace('>-', ''), ...folded].join('\n');
}

describe('deploy/prometheus with promtool', { skip }, () => {
  it('passes `promtool check config` (the scrape config and the rule files it names)', async () => {
    const output = await promtool('check', 'config', SHIPPED_PROMETHEUS_CONF);
    assert.match(output, /SUCCESS: 1 rule files found/);
  });

  it('passes `promtool check rules` and `promtool test rules`: each alert fires on its fault and stays silent on a normal day', async () => {
    assert.match(await promtool('check', 'rules', SHIPPED_ALERTS), /SUCCESS/);
    assert.match(await promtool('test', 'rules', SHIPPED_ALERT_TESTS), /SUCCESS/);
  });
});

describe('deploy/prometheus/alerts.yml', () => {
  it('gives every alert a severity, a summary and a description, and a test that fires it and one that keeps it silent', async () => {
    const tests = await read(SHIPPED_ALERT_TESTS);
    const alerts = (await rules()).filter((rule) => rule.kind === 'alert');
    assert.ok(alerts.length >= 7, `${alerts.length} alerts`);
    for (const { name, text } of alerts) {
      assert.match(text, /\n +severity: (critical|warning)\n/, `${name}: severity`);
      assert.match(text, /\n +summary: "[^"]{10,}"\n/, `${name}: summary`);
      assert.match(text, /\n +description: "[^\n]{80,}"/, `${name}: a description that says what to do`);
      const fired = new RegExp(`alertname: ${name}\\n +exp_alerts:\\n +- exp_labels:`);
      const silent = new RegExp(`alertname: ${name}, exp_alerts: \\[\\] \\}`);
      assert.match(tests, fired, `${name} is fired by a test`);
      assert.match(tests, silent, `${name} is kept silent by a test`);
    }
  });

  it('reads only series the service serves (or records), and each series of the alerts by its real name', async (t) => {
    const app = await createTestApp();
    t.after(app.close);
    const metrics = await scrapeMetrics(app.app);
    const served = new Set([...metrics.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => m[1]!));
    served.add('up'); // Prometheus's own, per target
    const all = await rules();
    const recorded = new Set(all.filter((rule) => rule.kind === 'record').map((rule) => rule.name));
    const words = new Set([
      ...['sum', 'max', 'rate', 'avg_over_time', 'by', 'on', 'and', 'or', 'unless', 'offset'],
    ]);
    const read = new Set<string>();
    for (const rule of all) {
      const expr = exprOf(rule.text)
        .replace(/"[^"]*"/g, '') // label values
        .replace(/\{[^}]*\}/g, '') // matchers
        .replace(/\[[^\]]*\]/g, '') // ranges
        .replace(/\b(by|on) \([^)]*\)/g, '$1'); // grouping labels
      for (const [word] of expr.matchAll(/(?<![\w.])[A-Za-z_:][\w:]*/g)) {
        if (words.has(word)) continue;
        if (word.includes(':'))
          assert.ok(recorded.has(word), `${rule.name} reads ${word}, which no rule records`);
        else {
          assert.ok(served.has(word), `${rule.name} reads ${word}, which /metrics does not serve`);
          read.add(word);
        }
      }
    }
    for (const series of [
      'up',
      'instance_ready',
      'rate_limit_store_degraded',
      'database_up',
      'login_gate_shed_total',
      'login_work_bits_asked',
      'http_requests_total',
      'rate_limit_refusals_total',
    ])
      assert.ok(read.has(series), `an alert reads ${series}`);
  });
});

describe('deploy/prometheus/prometheus.yml and compose.yaml', () => {
  it('scrapes every instance of compose.yaml on its metrics port, and compose runs it under the monitoring profile', async () => {
    const [compose, dockerfile, config] = await Promise.all([
      read(repositoryFile('compose.yaml')),
      read(repositoryFile('Dockerfile')),
      read(SHIPPED_PROMETHEUS_CONF),
    ]);
    const instances = [...compose.matchAll(/^ {2}([\w-]+):\n {4}<<: \*instance$/gm)].map((m) => m[1]!);
    assert.deepEqual(instances, ['api-1', 'api-2']);
    const port = /^\s+METRICS_PORT=(\d+)/m.exec(dockerfile)?.[1];
    assert.equal(port, '9464');
    const targets = [...config.matchAll(/^ +- ([\w.-]+:\d+)$/gm)].map((m) => m[1]!);
    assert.deepEqual(
      targets,
      instances.map((name) => `${name}:${port}`),
    );
    const service = /^ {2}prometheus:\n((?: {4}.*\n|\n)*)/m.exec(compose)?.[1] ?? '';
    assert.match(service, /profiles: \[monitoring\]/, 'only with --profile monitoring');
    assert.match(service, /- \.\/deploy\/prometheus:\/etc\/prometheus:ro/, 'the shipped files, read-only');
    assert.match(
      service,
      /"127\.0\.0\.1:\$\{PROMETHEUS_PORT:-9090\}:9090"/,
      'published on the loopback only',
    );
    assert.match(service, /healthcheck:/);
  });
});
