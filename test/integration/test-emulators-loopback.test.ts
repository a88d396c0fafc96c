/**
 * The emulators the tests start listen on 127.0.0.1 only: they take any credentials, so a test
 * run must not open them to the network. fauxqs's own `startFauxqs` listens on 0.0.0.0 whatever
 * its options (fauxqs 2.4), so no test file calls it (test/factories/loopback-fauxqs.ts instead).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmulatedSqs } from '../factories/emulated-sqs.ts';
import { startLoopbackFauxqs } from '../factories/loopback-fauxqs.ts';
import { startDynalite } from '../support/dynalite.ts';

const TEST_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The listening servers of this process (Node's active handles). */
function listeningServers(): Server[] {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h): h is Server => h instanceof Server && h.listening);
}

function addressOf(server: Server): string {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.address : String(address);
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('test emulators: loopback only', () => {
  it('the SQS (both factories) and DynamoDB emulators listen on 127.0.0.1 only', async () => {
    const before = new Set(listeningServers());
    const emulated = await startEmulatedSqs();
    const fauxqs = await startLoopbackFauxqs();
    const dynalite = await startDynalite();
    try {
      const opened = listeningServers().filter((s) => !before.has(s));
      expect(opened).toHaveLength(3);
      expect(opened.map(addressOf)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
      expect(emulated.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await Promise.all([emulated.stop(), fauxqs.stop(), dynalite.stop()]);
    }
  });

  it('no test file starts fauxqs with startFauxqs (it listens on 0.0.0.0)', () => {
    const self = fileURLToPath(import.meta.url);
    const callers = testFiles(TEST_DIR).filter(
      (file) => file !== self && /\bstartFauxqs\s*\(/.test(readFileSync(file, 'utf8')),
    );
    expect(callers).toEqual([]);
  });
});
