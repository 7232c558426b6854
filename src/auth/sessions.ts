// Sessions: signed random ids in a cookie, stored server-side, served from a short local cache.
import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { SessionsRepository } from '../db/repositories/sessions.ts';
import type { User } from '../db/repositories/users.ts';
import { digest, newSecret, tokensEqual } from './tokens.ts';

export interface SessionServiceOptions {
  readonly secret: string;
  readonly ttlMs: number;
  /** 0 disables the cache: every request asks the database. */
  readonly cacheMs: number;
  readonly clock: Clock;
}

interface CacheEntry {
  /** What the cookie resolved to (null: no such live session), handed out as is on every hit. */
  readonly session: ResolvedSession | null;
  readonly until: number;
}

const CACHE_MAX_ENTRIES = 50_000;

/** How often expired sessions are deleted: a table that only grows would slow every lookup. */
export const SESSION_PURGE_INTERVAL_MS = 15 * 60 * 1000;

export interface ResolvedSession {
  readonly user: User;
  /** The random session id (not the cookie's signature), to which the CSRF token is bound. */
  readonly sessionId: string;
  /** When it signed in (epoch ms, the clock's); null for a session older than that record. */
  readonly signedInAt: number | null;
}

export class SessionService {
  private readonly cache = new Map<string, CacheEntry>();
  /** Loads in flight, so that a burst of requests with one uncached cookie asks the database once. */
  private readonly loading = new Map<string, Promise<ResolvedSession | null>>();

  private readonly repository: SessionsRepository;
  private readonly options: SessionServiceOptions;

  constructor(repository: SessionsRepository, options: SessionServiceOptions) {
    this.repository = repository;
    this.options = options;
  }

  /** Starts a session for the user; returns the cookie value and the session id. */
  async create(userId: number): Promise<{ cookie: string; sessionId: string; maxAgeSeconds: number }> {
    const sessionId = newSecret();
    const now = this.options.clock.now();
    await this.repository.create(
      digest(sessionId),
      userId,
      new Date(now + this.options.ttlMs),
      new Date(now),
    );
    return {
      cookie: `${sessionId}.${this.sign(sessionId)}`,
      sessionId,
      maxAgeSeconds: Math.floor(this.options.ttlMs / 1000),
    };
  }

  /**
   * The session a cookie value names, or null. A cookie whose signature does not verify is refused
   * without touching the database, so forged cookies cannot turn into a database flood.
   */
  resolve(cookie: string): ResolvedSession | null | Promise<ResolvedSession | null> {
    const cached = this.cache.get(cookie);
    if (cached !== undefined && cached.until > this.options.clock.now()) return cached.session;
    const inFlight = this.loading.get(cookie);
    if (inFlight) return inFlight;
    const sessionId = this.verify(cookie);
    if (sessionId === null) return null;
    const load = this.load(cookie, sessionId).finally(() => {
      if (this.loading.get(cookie) === load) this.loading.delete(cookie);
    });
    this.loading.set(cookie, load);
    return load;
  }

  async destroy(cookie: string): Promise<void> {
    this.cache.delete(cookie);
    // A load that started before the logout must not put the session back into the cache.
    this.loading.delete(cookie);
    const sessionId = this.verify(cookie);
    if (sessionId !== null) await this.repository.delete(digest(sessionId));
  }

  /** Deletes the sessions expired by the clock's now; returns how many. */
  purgeExpired(): Promise<number> {
    return this.repository.deleteExpired(new Date(this.options.clock.now()));
  }

  private async load(cookie: string, sessionId: string): Promise<ResolvedSession | null> {
    const now = this.options.clock.now();
    const record = await this.repository.find(digest(sessionId), new Date(now));
    const session = record ? { user: record.user, sessionId, signedInAt: record.signedInAt } : null;
    const stillWanted = this.loading.has(cookie); // false once destroy() ran meanwhile
    if (this.options.cacheMs > 0 && stillWanted) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      const until = Math.min(now + this.options.cacheMs, record?.expiresAt ?? Number.POSITIVE_INFINITY);
      this.cache.set(cookie, { session, until });
    }
    return session;
  }

  private verify(cookie: string): string | null {
    const dot = cookie.indexOf('.');
    if (dot !== 43 || cookie.length > 100) return null; // 32 random bytes are 43 base64url characters
    const sessionId = cookie.slice(0, dot);
    return tokensEqual(cookie.slice(dot + 1), this.sign(sessionId)) ? sessionId : null;
  }

  private sign(sessionId: string): string {
    return createHmac('sha256', this.options.secret)
      .update(`session-cookie\0${sessionId}`)
      .digest('base64url')
      .slice(0, 32);
  }
}
