/**
 * `npm start` (bin/start.ts) as a child process, as the npm script runs it (`node --import tsx`
 * on the Node that runs the tests: the Node 24 of the devDependencies under npm/npx), or through
 * npm itself, with waits on what it prints (never fixed sleeps) for the tests of
 * `--keep-running`, `--console` and `--no-workload`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A running `npm start`. */
export interface StartProcess {
  readonly child: ChildProcess;
  /** Everything printed so far. */
  stdout(): string;
  stderr(): string;
  /**
   * Resolves with the first match of `pattern` in the stream's output (as soon as it is printed);
   * rejects when the process ends first or `timeoutMs` passes, with what it printed.
   */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the process has ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Ctrl-C as a terminal sends it: SIGINT to every process of the foreground process group (with
   * `npm`: npm, the shell it runs the script in, and node), else to the process.
   */
  ctrlC(): void;
  /** Kills what it started (SIGKILL; with `npm`, the whole process group). */
  kill(): void;
}

/** Options of {@link spawnStart}. */
export interface SpawnStartOptions {
  /**
   * Run `npm start -- <args>` in a process group of its own, as a terminal runs it, instead of
   * node on bin/start.ts. @default false
   */
  readonly npm?: boolean;
}

/** Spawns bin/start.ts with `args`, with the endpoint variables of the test's environment unset. */
export function spawnStart(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  options: SpawnStartOptions = {},
): StartProcess {
  const [command, argv] = options.npm
    ? ['npm', ['start', '--', ...args]]
    : [process.execPath, ['--import', 'tsx', 'bin/start.ts', ...args]];
  const child = spawn(command, argv, {
    detached: options.npm === true,
    cwd: ROOT,
    env: {
      ...process.env,
      FORCE_COLOR: '0',
      SQS_JOBS_ENDPOINT_URL: undefined,
      SQS_JOBS_SQS_ENDPOINT: undefined,
      SQS_JOBS_DYNAMODB_ENDPOINT: undefined,
      SQS_JOBS_DEBUG: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  let ended = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      ended = true;
      for (const listener of listeners) listener();
      resolve({ code, signal });
    });
  });
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]?.on('data', (chunk: Buffer) => {
      output[stream] += chunk.toString();
      for (const listener of listeners) listener();
    });
  }
  const signal = (name: NodeJS.Signals) => {
    if (options.npm && child.pid !== undefined) process.kill(-child.pid, name);
    else child.kill(name);
  };
  return {
    child,
    ctrlC: () => signal('SIGINT'),
    kill: () => signal('SIGKILL'),
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    exited,
    waitFor(pattern, stream = 'stdout', timeoutMs = 150_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output[stream]);
          if (match) {
            done();
            resolve(match);
          } else if (ended) {
            done();
            reject(
              new Error(
                `npm start ended before printing ${pattern} (exit ${child.exitCode})\n--- stdout\n${output.stdout}\n--- stderr\n${output.stderr}`,
              ),
            );
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(
              `npm start did not print ${pattern} within ${timeoutMs} ms\n--- stdout\n${output.stdout}\n--- stderr\n${output.stderr}`,
            ),
          );
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}

/** Whether something accepts TCP connections at `url`'s host and port. */
export function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Splits a printed shell command line into its words (plain words and '...' quoted ones). */
export function shellWords(line: string): string[] {
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) =>
    m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : (m[2] as string),
  );
}
