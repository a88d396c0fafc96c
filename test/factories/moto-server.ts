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

function requireMoto(command: string): void {
  if (spawnSync(command, ['--help'], { stdio: 'ignore' }).status !== 0) {
    throw new Error(
      `${command} does not run: pip install 'moto[server]==5.2.1' (or run .ci/run, which installs it into .ci/.venv)`,
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

/**
 * Starts moto's server and waits until it answers.
 * @param command the `moto_server` executable. @default 'moto_server' (on the PATH)
 * @throws when it does not run, or does not answer within 20 s.
 */
export async function startMotoServer(command = 'moto_server'): Promise<MotoServer> {
  requireMoto(command);
  const port = await freePort();
  const child = spawn(command, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(endpoint, 20_000);
  } catch (error) {
    child.kill();
    throw error;
  }
  return { endpoint, stop: () => child.kill() };
}
