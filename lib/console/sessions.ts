/**
 * Who may use the console: the key of this start, and the browser sessions opened with it.
 *
 * Why not a cookie holding the key: browsers scope cookies by host, not by port (RFC 6265 §8.5),
 * so every other server on 127.0.0.1 (a dev server, a notebook) receives the console's cookies and
 * could log the key; and another local port is the same *site*, so `SameSite=Strict` does not keep
 * its pages from sending cookie-carrying requests either. What browsers do keep apart by port is
 * the *origin* (scheme, host and port): `sessionStorage` and the right to read an answer.
 *
 * So, like a login followed by a session (as Jupyter's token login and most web tools do), with
 * the session's secret kept where only the console's own origin can read it:
 * - the key is presented once, in the printed URL (`/?token=<key>`);
 * - that answer opens a session: a random id in an HttpOnly, SameSite=Strict cookie named with the
 *   port, and a random page secret (never the key) in the page itself, which the page moves to
 *   `sessionStorage`;
 * - every API call needs the page secret in the `x-sqs-jobs-token` header, and the cookie it was
 *   minted with (the two are bound here, server-side); state changes also need the console's own
 *   `Origin` (lib/console/server.ts). The key itself in that header works too (scripts, tests).
 *
 * The cookie alone opens the page's static files, nothing else: no data, no title, no secret.
 * Sessions live in memory until the console stops; a new start has a new key and no sessions.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Most sessions kept at once; opening one more forgets the oldest. */
export const MAX_CONSOLE_SESSIONS = 64;

/** A browser session: the cookie's value and the page's secret. */
export interface ConsoleSession {
  /** Value of the session cookie: 32 random bytes, base64url. */
  readonly id: string;
  /** What the page sends in the `x-sqs-jobs-token` header: 32 random bytes, base64url. */
  readonly secret: string;
}

function random(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares in constant time; false for a missing value. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The key and the sessions opened with it. */
export class ConsoleSessions {
  readonly #key: string;
  /** Session id → page secret, oldest first. */
  readonly #secrets = new Map<string, string>();
  readonly #max: number;

  /**
   * @param key the console's access token (printed in its URL)
   * @param max most sessions kept @default {@link MAX_CONSOLE_SESSIONS}
   */
  constructor(key: string, max: number = MAX_CONSOLE_SESSIONS) {
    this.#key = key;
    this.#max = max;
  }

  /** Whether `given` is the key. */
  isKey(given: string | undefined): boolean {
    return sameSecret(given, this.#key);
  }

  /** Opens a session (for a request that presented the key). */
  open(): ConsoleSession {
    const session = { id: random(), secret: random() };
    this.#secrets.set(session.id, session.secret);
    while (this.#secrets.size > this.#max) {
      const oldest = this.#secrets.keys().next().value as string;
      this.#secrets.delete(oldest);
    }
    return session;
  }

  /** Whether `id` (a cookie's value) is an open session. */
  isSession(id: string | undefined): boolean {
    return id !== undefined && this.#secrets.has(id);
  }

  /**
   * Whether a request may call the API: the key in the header, or the page secret in the header
   * together with the cookie of the session it belongs to.
   */
  allows(header: string | undefined, cookie: string | undefined): boolean {
    if (this.isKey(header)) return true;
    const secret = cookie === undefined ? undefined : this.#secrets.get(cookie);
    return secret !== undefined && sameSecret(header, secret);
  }
}
