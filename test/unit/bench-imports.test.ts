// The bench's import rules (bench/README.md): nothing from test/, the flood kit a leaf, no circle.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function benchFiles(dir = 'bench'): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'runs'].includes(entry.name) ? [] : benchFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The repository-relative files a file imports (relative specifiers, `import type` included). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g)].map((match) =>
    path.posix.join(path.posix.dirname(file), match[1]!),
  );
}

describe('bench/ imports', () => {
  const files = benchFiles();
  const graph = new Map(files.map((file) => [file, importsOf(file)]));

  it('takes nothing from test/', () => {
    for (const [file, imports] of graph)
      for (const target of imports) assert.ok(!target.startsWith('test/'), `${file} imports ${target}`);
  });

  it('keeps the flood kit a leaf: it imports no other file of bench/flood/', () => {
    const kit = graph.get('bench/flood/kit.ts');
    assert.ok(kit, 'bench/flood/kit.ts exists');
    assert.deepEqual(
      kit.filter((target) => target.startsWith('bench/flood/')),
      [],
    );
  });

  it('has no circle of imports', () => {
    const done = new Set<string>();
    const visit = (file: string, trail: string[]) => {
      if (trail.includes(file))
        assert.fail(`a circle: ${[...trail.slice(trail.indexOf(file)), file].join(' → ')}`);
      if (done.has(file)) return;
      for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
      done.add(file);
    };
    for (const file of files) visit(file, []);
  });
});
