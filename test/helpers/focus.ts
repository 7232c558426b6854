// Where keyboard focus is in the page under test: the focused element's role and accessible name, for asserting and for the walk.
import type { Page } from 'playwright-core';

/** The focused element as a person hears it: role and name ('button "Apply filters"'), or 'body' when focus is lost. */
export function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement;
    if (element === null || element === document.body) return 'body';
    const text = (node: Element | null) => node?.textContent?.replace(/\s+/g, ' ').trim() ?? '';
    const labelledBy = element.getAttribute('aria-labelledby');
    const name =
      element.getAttribute('aria-label') ??
      (labelledBy
        ? labelledBy
            .split(' ')
            .map((id) => text(document.getElementById(id)))
            .join(' ')
        : null) ??
      ((element as HTMLInputElement).labels?.[0] ? text((element as HTMLInputElement).labels![0]!) : null) ??
      text(element);
    const tag = element.tagName.toLowerCase();
    const type = element.getAttribute('type');
    const implicit: Record<string, string> = { a: 'link', select: 'combobox', h1: 'heading', h2: 'heading' };
    const role =
      element.getAttribute('role') ??
      (tag === 'input' ? (type === 'checkbox' ? 'checkbox' : 'textbox') : (implicit[tag] ?? tag));
    return `${role} "${name.slice(0, 80)}"`;
  });
}

/** Presses `key` and answers where focus is then. */
export async function press(page: Page, key: string): Promise<string> {
  await page.keyboard.press(key);
  return focused(page);
}
