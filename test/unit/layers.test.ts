// The architecture's import rules (docs/architecture.md, "Layers"), checked on every source file.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Each layer, and the layers (relative to the repository root) it must never import. */
const FORBIDDEN: Readonly<Record<string, readonly string[]>> = {
  // Routes are a schema and a call (docs/architecture.md, "Layers"): they ask the services they are
  // given, and never reach the database, a repository or a transaction themselves.
  'src/http/routes': ['src/db', 'src/client', 'web'],
  'src/http': ['src/client', 'web'],
  // The services that change an account, and the tasks': above the login defence and the
  // repositories they compose, below HTTP.
  'src/accounts': ['src/http', 'src/cli', 'src/client', 'web'],
  'src/tasks': ['src/http', 'src/accounts', 'src/login', 'src/auth', 'src/rate-limit', 'src/client', 'web'],
  // The login defence sits between them and the layers it composes: it knows no HTTP, and nothing
  // below it knows it.
  'src/login': ['src/http', 'src/accounts', 'src/tasks', 'src/client', 'web'],
  'src/rate-limit': ['src/http', 'src/accounts', 'src/tasks', 'src/login', 'src/db', 'src/client', 'web'],
  'src/auth': ['src/http', 'src/accounts', 'src/tasks', 'src/login', 'src/rate-limit', 'src/client', 'web'],
  'src/db': ['src/http', 'src/accounts', 'src/tasks', 'src/login', 'src/rate-limit', 'src/client', 'web'],
  'src/client': [
    'src/http',
    'src/accounts',
    'src/tasks',
    'src/login',
    'src/rate-limit',
    'src/auth',
    'src/db',
    'web',
  ],
  'src/cli': ['src/http', 'src/client', 'web'],
  web: ['src/http', 'src/accounts', 'src/tasks', 'src/login', 'src/rate-limit', 'src/auth', 'src/db'],
};
/**
 * Shared facts at the top of src/ sit under every layer and import none. (config.ts is the other
 * kind of top-level file: it reads the environment with the parsers of the layers it configures.)
 */
const TOP_LEVEL_MAY_IMPORT = [
  'src/errors.ts',
  'src/clock.ts',
  'src/limits.ts',
  'src/duration.ts',
  'src/domain.ts',
  'src/security-event.ts',
];

/**
 * The server's modules the typed client (shipped to browsers) imports, so that a name or a limit
 * both sides use is declared once (docs/architecture.md, "Layers"). Each imports nothing at all:
 * no package, no `node:` module, no other file, so the browser gets no server code.
 */
const SHARED_WITH_CLIENT = [
  'src/domain.ts',
  'src/limits.ts',
  'src/security-event.ts',
  'src/auth/password-refusals.ts',
  'src/login/proved-work.ts',
  'src/rate-limit/control-names.ts',
];

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'dist' ? [] : sourceFiles(relative);
    return /\.tsx?$/.test(entry.name) ? [relative] : [];
  });
}

/** The repository-relative paths a file imports (relative specifiers only: packages are not layers). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/g)].map(
    (match) => match[1]!,
  );
  return specifiers.map((specifier) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)),
  );
}

const within = (file: string, layer: string) => file === layer || file.startsWith(`${layer}/`);

/** Every module a file imports or re-exports from (packages and `node:` ones too), dynamic imports included. */
function allSpecifiersOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const statements =
    /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|\bimport\(\s*'([^']+)'/g;
  return [...text.matchAll(statements)].map((match) => (match[1] ?? match[2] ?? match[3])!);
}

describe('layers import downward only', () => {
  const files = [...sourceFiles('src'), ...sourceFiles('web/src')];

  it('finds the source files it checks', () => {
    assert.ok(files.length > 50, `only ${files.length} files found`);
  });

  for (const [layer, forbidden] of Object.entries(FORBIDDEN)) {
    it(`${layer} imports none of ${forbidden.join(', ')}`, () => {
      const breaches = files
        .filter((file) => within(file, layer))
        .flatMap((file) =>
          importsOf(file)
            .filter((target) => forbidden.some((other) => within(target, other)))
            .filter((target) => !(within(file, 'src/client') && SHARED_WITH_CLIENT.includes(target)))
            .map((target) => `${file} → ${target}`),
        );
      assert.deepEqual(breaches, []);
    });
  }

  it("only src/app.ts imports the app's builders (src/app/)", () => {
    const breaches = files.flatMap((file) =>
      file === 'src/app.ts' || within(file, 'src/app')
        ? []
        : importsOf(file)
            .filter((target) => within(target, 'src/app'))
            .map((target) => `${file} → ${target}`),
    );
    assert.deepEqual(breaches, []);
  });

  it('the client imports of the server only the shared modules, and they import nothing', () => {
    const reached = files
      .filter((file) => within(file, 'src/client'))
      .flatMap((file) => importsOf(file).filter((target) => !within(target, 'src/client')));
    assert.deepEqual(
      reached.filter((target) => !SHARED_WITH_CLIENT.includes(target)),
      [],
    );
    assert.deepEqual(
      SHARED_WITH_CLIENT.flatMap((file) =>
        allSpecifiersOf(file).map((specifier) => `${file} → ${specifier}`),
      ),
      [],
    );
  });

  it('the top-level modules import no layer', () => {
    const layers = Object.keys(FORBIDDEN);
    const breaches = TOP_LEVEL_MAY_IMPORT.flatMap((file) =>
      importsOf(file)
        .filter((target) => layers.some((layer) => within(target, layer)))
        .map((target) => `${file} → ${target}`),
    );
    assert.deepEqual(breaches, []);
  });
});
