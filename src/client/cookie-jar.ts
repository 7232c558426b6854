// A minimal cookie jar for runtimes whose fetch keeps no cookies (Node, scripts); browsers need none.

export interface CookieJar {
  /** The `Cookie` header to send, or null when the jar is empty. */
  header(): string | null;
  /** Takes in a response's `Set-Cookie` headers. */
  store(setCookies: readonly string[], now?: number): void;
}

/**
 * One origin's cookies by name, in memory. Attributes other than expiry are ignored: the jar
 * belongs to one client talking to one API, so Domain and Path always match.
 */
export class MemoryCookieJar implements CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string | null {
    if (this.cookies.size === 0) return null;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(setCookies: readonly string[], now: number = Date.now()): void {
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || expired(attributes, now)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  clear(): void {
    this.cookies.clear();
  }
}

function expired(attributes: readonly string[], now: number): boolean {
  for (const attribute of attributes) {
    const [key = '', value = ''] = attribute.split('=', 2).map((part) => part.trim());
    if (key.toLowerCase() === 'max-age' && Number(value) <= 0) return true;
    if (key.toLowerCase() === 'expires' && Date.parse(value) <= now) return true;
  }
  return false;
}
