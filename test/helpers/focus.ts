// Where keyboard focus is in the page under test: the focused element's role and accessible name.
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
    const implicit: Record<string, string> = {
      a: 'link',
      select: 'combobox',
      h1: 'heading',
      h2: 'heading',
      nav: 'navigation',
    };
    const role =
      element.getAttribute('role') ??
      (tag === 'input' ? (type === 'checkbox' ? 'checkbox' : 'textbox') : (implicit[tag] ?? tag));
    return `${role} "${name.slice(0, 80)}"`;
  });
}

/** A keyboard walk: each key pressed and where focus lands, kept as lines for the record. */
export class Walk {
  readonly lines: string[] = [];
  readonly #page: Page;
  constructor(page: Page) {
    this.#page = page;
  }

  /** Notes where focus is after something that is not a key (the page loading). */
  async note(what: string): Promise<string> {
    const where = await focused(this.#page);
    this.lines.push(`${what.padEnd(34)} → ${where}`);
    return where;
  }

  /** Presses `key` and notes where focus lands; `until` waits for what the key sets off first. */
  async press(key: string, until?: () => Promise<unknown>): Promise<string> {
    await this.#page.keyboard.press(key);
    await until?.();
    return this.note(key);
  }

  async type(text: string): Promise<string> {
    await this.#page.keyboard.type(text);
    return this.note(`type "${text}"`);
  }
}
