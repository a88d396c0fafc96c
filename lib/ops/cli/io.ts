/**
 * What the `sqs-jobs` CLI needs from its process, injected so that tests run it in-process:
 * output streams, the environment, stdin, the SQS and CloudWatch clients, Ctrl-C, the clock.
 * bin/sqs-jobs.ts wires the real process.
 */
import type { OpsClientInput } from '../client.ts';
import type { MetricDataReader } from '../oldest-age.ts';
import type { OpsSqs } from '../queue.ts';

/** Where the CLI reads and writes; tests pass their own. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  /** Whether a person can answer the redrive confirmation. */
  readonly stdinIsTTY: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Asks a question on the terminal and resolves to the answer. */
  readonly ask?: (question: string) => Promise<string>;
  /** Reads all of stdin (`send --envelope -`, `--data -`). @default none: `-` is refused */
  readonly readStdin?: () => Promise<string>;
  /** Makes the SQS client. @default createOpsSqsClient */
  readonly createSqs?: (input: OpsClientInput) => OpsSqs & { destroy?(): void };
  /**
   * Makes the CloudWatch reader of `stats` (age of the oldest message), used only when no custom
   * endpoint is set. @default loadCloudWatchReader (needs `@aws-sdk/client-cloudwatch`)
   */
  readonly createMetrics?: (input: OpsClientInput) => Promise<MetricDataReader>;
  /** Interrupts the running command (Ctrl-C): it stops, releases what it holds and exits (130, or 0 for `stats --watch`). */
  readonly signal?: AbortSignal;
  /** Waits `ms` (`--verify-seconds`, `--watch`). @default a timer, cut short by `signal` */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The clock, ms since the epoch. @default Date.now */
  readonly nowMs?: () => number;
}

/** Exit codes of `sqs-jobs`. */
export const CLI_EXIT = { ok: 0, problems: 1, cannotRun: 2, interrupted: 130 } as const;

/** A timer that resolves after `ms`, or at once when `signal` aborts. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A one-line status on a terminal's stderr, rewritten in place; silent elsewhere. */
export function statusLine(io: CliIo, enabled: boolean) {
  let last = 0;
  let shown = false;
  return {
    update(text: string) {
      if (!enabled) return;
      const now = Date.now();
      if (now - last < 200) return;
      last = now;
      shown = true;
      io.stderr.write(`\r\x1b[K${text}`);
    },
    clear() {
      if (shown) io.stderr.write('\r\x1b[K');
      shown = false;
    },
  };
}
