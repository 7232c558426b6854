// Sessions: signed random ids in a cookie, stored server-side, served from a short local cache kept coherent
// across instances.
import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { NewSession, SessionsRepository } from '../db/repositories/sessions.ts';
import type { User } from '../db/repositories/users.ts';
import { digest, newSecret, tokensEqual } from './tokens.ts';

export interface SessionServiceOptions {
  readonly secret: string;
  readonly ttlMs: number;
  /** 0 disables the cache: every request asks the database. */
  readonly cacheMs: number;
  readonly clock: Clock;
  /** Told when writing a session's last use failed (the request it came from goes on regardless). */
  readonly onTouchError?: (error: unknown) => void;
}

/** A session as a request sees it; `lastSeenAt` moves as the session is used. */
interface LiveSession extends ResolvedSession {
  lastSeenAt: number;
}

interface CacheEntry {
  /** What the cookie resolved to (null: no such live session), handed out as is on every hit. */
  readonly session: LiveSession | null;
  readonly until: number;
}

const CACHE_MAX_ENTRIES = 50_000;

/** How often expired sessions are deleted: a table that only grows would slow every lookup. */
export const SESSION_PURGE_INTERVAL_MS = 15 * 60 * 1000;

/**
 * How far behind a session's `lastSeenAt` may be: a request writes it only when the one written is
 * older than this, so a session costs at most one write a minute however busy it is.
 */
export const LAST_SEEN_INTERVAL_MS = 60 * 1000;

/** A user agent is kept to this many characters. */
const USER_AGENT_MAX = 256;

export interface ResolvedSession {
  readonly user: User;
  /** The random session id (not the cookie's signature), to which the CSRF token is bound. */
  readonly sessionId: string;
  /** When it signed in (epoch ms, the clock's); null for a session older than that record. */
  readonly signedInAt: number | null;
  /** The id its owner sees in the list of sessions (never the session id, nor its digest). */
  readonly publicId: string;
}

/** A session made but not yet stored: the cookie to set and the row to write. */
export interface MintedSession {
  readonly sessionId: string;
  readonly cookie: string;
  readonly maxAgeSeconds: number;
  readonly row: NewSession;
}

export class SessionService {
  private readonly cache = new Map<string, CacheEntry>();
  /** Loads in flight, so that a burst of requests with one uncached cookie asks the database once. */
  private loading = new Map<string, Promise<ResolvedSession | null>>();
  /**
   * Moves on every change announced (a session ended, an account changed): a load that started
   * before it does not go into the cache, since it may have read what the change removed.
   */
  private generation = 0;
  /** Whether this instance hears other instances' changes; while it does not, nothing is cached. */
  private coherent = true;

  private readonly repository: SessionsRepository;
  private readonly options: SessionServiceOptions;

  constructor(repository: SessionsRepository, options: SessionServiceOptions) {
    this.repository = repository;
    this.options = options;
  }

  /** A new session for the user, not yet stored (a sign-in writes it with its other writes). */
  mint(userId: number, userAgent: string | null | undefined): MintedSession {
    const sessionId = newSecret();
    const now = this.options.clock.now();
    return {
      sessionId,
      cookie: `${sessionId}.${this.sign(sessionId)}`,
      maxAgeSeconds: Math.floor(this.options.ttlMs / 1000),
      row: {
        idHash: digest(sessionId),
        userId,
        expiresAt: now + this.options.ttlMs,
        signedInAt: now,
        userAgent: userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
      },
    };
  }

  /** Starts and stores a session for the user; returns the cookie value and the session id. */
  async create(
    userId: number,
    userAgent: string | null = null,
  ): Promise<{ cookie: string; sessionId: string; maxAgeSeconds: number }> {
    const session = this.mint(userId, userAgent);
    await this.repository.create(session.row);
    return session;
  }

  /** The digest the database keeps of a session id. */
  idHashOf(sessionId: string): string {
    return digest(sessionId);
  }

  /**
   * The session a cookie value names, or null. A cookie whose signature does not verify is refused
   * without touching the database, so forged cookies cannot turn into a database flood.
   */
  resolve(cookie: string): ResolvedSession | null | Promise<ResolvedSession | null> {
    const cached = this.cache.get(cookie);
    if (cached !== undefined && cached.until > this.options.clock.now()) {
      if (cached.session !== null) this.seen(cached.session);
      return cached.session;
    }
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

  /**
   * Forgets what this instance cached of the user's sessions: called on this instance right after
   * it changed the account (a session ended, a role changed), and on every instance when the change
   * is announced (db/repositories/sessions.ts, ACCOUNT_CHANGES_CHANNEL).
   */
  forgetUser(userId: number): void {
    this.generation++;
    // Loads in flight may have read the account before the change: later requests start their own.
    this.loading = new Map();
    for (const [cookie, entry] of this.cache)
      if (entry.session?.user.id === userId) this.cache.delete(cookie);
  }

  /**
   * Whether this instance hears the changes other instances announce. While it does not (the
   * listening connection broke), it caches nothing and asks the database on every request; what
   * it cached before is dropped, since changes may have gone unheard.
   */
  setCoherent(coherent: boolean): void {
    this.generation++;
    this.loading = new Map();
    this.cache.clear();
    this.coherent = coherent;
  }

  /** Deletes the sessions expired by the clock's now; returns how many. */
  purgeExpired(): Promise<number> {
    return this.repository.deleteExpired(new Date(this.options.clock.now()));
  }

  private async load(cookie: string, sessionId: string): Promise<ResolvedSession | null> {
    const generation = this.generation;
    const now = this.options.clock.now();
    const record = await this.repository.find(digest(sessionId), new Date(now));
    const session: LiveSession | null = record
      ? {
          user: record.user,
          sessionId,
          signedInAt: record.signedInAt,
          publicId: record.publicId,
          lastSeenAt: record.lastSeenAt,
        }
      : null;
    if (session !== null) this.seen(session);
    // Not cached when destroy() or a change ran meanwhile, or while other instances go unheard.
    const stillWanted = this.loading.get(cookie) !== undefined && generation === this.generation;
    if (this.options.cacheMs > 0 && this.coherent && stillWanted) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      const until = Math.min(now + this.options.cacheMs, record?.expiresAt ?? Number.POSITIVE_INFINITY);
      this.cache.set(cookie, { session, until });
    }
    return session;
  }

  /** The session serves a request now: its last use is written if the one written is a minute old. */
  private seen(session: LiveSession): void {
    const now = this.options.clock.now();
    if (now - session.lastSeenAt < LAST_SEEN_INTERVAL_MS) return;
    session.lastSeenAt = now;
    this.repository
      .touch(digest(session.sessionId), now, now - LAST_SEEN_INTERVAL_MS)
      .catch((error: unknown) => this.options.onTouchError?.(error));
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
