// axe-core in the page under test: WCAG 2.0–2.2 A/AA and best practices, a readable line each.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';

/** The rule sets run: WCAG 2.0, 2.1 and 2.2 at A and AA (2.2 adds AA rules only), and axe's best practices. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe over the whole document; answers one line per rule broken ("rule (impact): help — the
 * first three selectors and how many more"), none when the page passes. The source is evaluated through the DevTools protocol,
 * which the page's CSP does not govern (a script tag would be refused).
 */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(
    (tags) =>
      (
        window as unknown as { axe: { run: (context: Document, options: object) => Promise<AxeResults> } }
      ).axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }),
    AXE_TAGS,
  );
  return results.violations.map((violation) => {
    const targets = violation.nodes.map((node) => node.target.join(' '));
    const more = targets.length > 3 ? ` and ${targets.length - 3} more` : '';
    return `${violation.id} (${violation.impact}): ${violation.help} — ${targets.slice(0, 3).join(', ')}${more}`;
  });
}
