/**
 * Runs one of the repository's scripts (bin/sqs-jobs.ts, bin/start.ts, bin/dlq.ts) as a user
 * does: a child process of this Node (the devDependencies' Node 24 when the tests run through
 * npm/npx) under tsx, in the repository root, without colours; its exit code and whole output
 * once it has exited. For tests of what the process itself does (exit codes, stdin, signals);
 * the CLI's behaviour is tested in process (cli.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ScriptRun {
  /** The exit code; -1 when a signal ended the process. */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ScriptOptions {
  /** On top of this process's environment (`undefined` removes a variable). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Written to the child's stdin, then closed; without it, stdin is /dev/null. */
  readonly stdin?: string | Uint8Array;
  /** Sees stderr as it grows, with the child: e.g. to press Ctrl-C at a given moment. */
  readonly onStderr?: (stderr: string, child: ChildProcess) => void;
}

/** Runs `node --import tsx <argv>` (argv[0] the script, relative to the root). */
export function runScript(argv: readonly string[], options: ScriptOptions = {}): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...argv], {
      cwd: ROOT,
      env: { ...process.env, FORCE_COLOR: '0', ...options.env },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
      options.onStderr?.(stderr, child);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  });
}
