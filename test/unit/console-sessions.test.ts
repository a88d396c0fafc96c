/**
 * The console's sessions (lib/console/sessions.ts): the key opens them; the API needs the page
 * secret together with the cookie it was minted with (or the key); the oldest are forgotten
 * beyond the limit. Over HTTP: test/integration/console-server.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConsoleSessions } from '../../lib/console/sessions.ts';

describe('ConsoleSessions', () => {
  it('binds each page secret to its own cookie, and neither is the key', () => {
    const sessions = new ConsoleSessions('the-key');
    const a = sessions.open();
    const b = sessions.open();
    for (const value of [a.id, a.secret, b.id, b.secret]) expect(value).not.toBe('the-key');
    expect(sessions.allows(a.secret, a.id)).toBe(true);
    expect(sessions.allows('the-key', undefined)).toBe(true);
    // The cookie alone, the secret alone, another session's pair, the key as a cookie: no.
    expect(sessions.allows(undefined, a.id)).toBe(false);
    expect(sessions.allows(a.secret, undefined)).toBe(false);
    expect(sessions.allows(a.secret, b.id)).toBe(false);
    expect(sessions.allows(a.id, a.id)).toBe(false);
    expect(sessions.allows(undefined, 'the-key')).toBe(false);
    expect(sessions.isSession(a.id)).toBe(true);
    expect(sessions.isSession('the-key')).toBe(false);
  });

  it('forgets the oldest session beyond its limit', () => {
    const sessions = new ConsoleSessions('the-key', 2);
    const first = sessions.open();
    const second = sessions.open();
    const third = sessions.open();
    expect(sessions.allows(first.secret, first.id)).toBe(false);
    expect(sessions.isSession(first.id)).toBe(false);
    expect(sessions.allows(second.secret, second.id)).toBe(true);
    expect(sessions.allows(third.secret, third.id)).toBe(true);
  });
});
