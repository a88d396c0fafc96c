/**
 * moto's server (PyPI `moto[server]`) on a free loopback port, for the conformance suite
 * (test/conformance, `npm run test:conformance`; `.ci/run` installs moto into `.ci/.venv`). A
 * missing `moto_server` fails the suite, it never skips.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

/** A running moto server. */
export interface MotoServer {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  stop(): void;
}

function requireMoto(): void {
  if (spawnSync('moto_server', ['--help'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      "moto_server is not on the PATH: pip install 'moto[server]==5.2.1' (or run .ci/run, which installs it)",
    );
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Starts `moto_server` and waits until it answers. */
export async function startMotoServer(): Promise<MotoServer> {
  requireMoto();
  const port = await freePort();
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(endpoint, 20_000);
  } catch (error) {
    child.kill();
    throw error;
  }
  return { endpoint, stop: () => child.kill() };
}
