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
  readonly user: User | null;
  readonly sessionId: string;
  readonly until: number;
}

const CACHE_MAX_ENTRIES = 50_000;

export interface ResolvedSession {
  readonly user: User;
  /** The random session id (not the cookie's signature), to which the CSRF token is bound. */
  readonly sessionId: string;
}

export class SessionService {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly repository: SessionsRepository,
    private readonly options: SessionServiceOptions,
  ) {}

  /** Starts a session for the user; returns the cookie value and the session id. */
  async create(userId: number): Promise<{ cookie: string; sessionId: string; maxAgeSeconds: number }> {
    const sessionId = newSecret();
    await this.repository.create(
      digest(sessionId),
      userId,
      new Date(this.options.clock.now() + this.options.ttlMs),
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
    if (cached && cached.until > this.options.clock.now()) {
      return cached.user ? { user: cached.user, sessionId: cached.sessionId } : null;
    }
    const sessionId = this.verify(cookie);
    if (sessionId === null) return null;
    return this.load(cookie, sessionId);
  }

  async destroy(cookie: string): Promise<void> {
    this.cache.delete(cookie);
    const sessionId = this.verify(cookie);
    if (sessionId !== null) await this.repository.delete(digest(sessionId));
  }

  private async load(cookie: string, sessionId: string): Promise<ResolvedSession | null> {
    const now = this.options.clock.now();
    const record = await this.repository.find(digest(sessionId), new Date(now));
    if (this.options.cacheMs > 0) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      const until = Math.min(now + this.options.cacheMs, record?.expiresAt ?? Number.POSITIVE_INFINITY);
      this.cache.set(cookie, { user: record?.user ?? null, sessionId, until });
    }
    return record ? { user: record.user, sessionId } : null;
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
