/**
 * What the `sqs-jobs` CLI needs from its process, injected so that tests run it in-process:
 * output streams, the environment, stdin, the SQS and CloudWatch clients, Ctrl-C, the clock.
 * bin/sqs-jobs.ts wires the real process.
 */
import type { OpsClientInput } from '../ops/client.ts';
import type { MetricDataReader } from '../ops/oldest-age.ts';
import type { OpsSqs } from '../ops/queue.ts';

/** Where the CLI reads and writes; tests pass their own. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown; readonly isTTY?: boolean };
  readonly stderr: { write(text: string): unknown; readonly isTTY?: boolean };
  /** The package version, printed by `sqs-jobs --version`. @default none: no --version flag */
  readonly version?: string;
  /** Whether a person can answer the redrive confirmation. */
  readonly stdinIsTTY: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Asks a question on the terminal and resolves to the answer. */
  readonly ask?: (question: string) => Promise<string>;
  /**
   * Reads all of stdin (`send --envelope -`, `--data -`) as UTF-8 text ({@link readUtf8}).
   * @throws {StdinError} when stdin is not valid UTF-8. @default none: `-` is refused
   */
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

/** Stdin cannot be used as it is (not UTF-8): one `error:` line, exit code 2. */
export class StdinError extends Error {
  override readonly name = 'StdinError';
}

/**
 * All of `stream` as text, decoded as UTF-8 (RFC 3629) with a fatal decoder: a byte sequence
 * that is not UTF-8 (a Latin-1 `é`, a UTF-16 file) is refused instead of being replaced by
 * U+FFFD and sent on. A leading byte order mark is dropped.
 * @throws {StdinError} when the bytes are not valid UTF-8, saying how to convert them.
 */
export async function readUtf8(stream: AsyncIterable<Uint8Array | string>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);
  }
  const bytes = Buffer.concat(chunks);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new StdinError('stdin is not valid UTF-8: convert it, e.g. iconv -f latin1 -t utf-8');
  }
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
