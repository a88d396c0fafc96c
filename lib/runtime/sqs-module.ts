/**
 * The AWS SDK's SQS module, loaded at its first use. A batch whose records all complete sends
 * nothing to SQS (the event source mapping deletes them), so a worker loads the module only when
 * a record is retried, dead-lettered or enqueues a child: the module and its command serializers
 * are kept out of every cold start and out of the heap of workers that never need them (bench
 * cold-start and heap rows, issue 10). In a bundle that includes the SDK the module is still in
 * the file; only its evaluation waits.
 *
 * Except near the deadline: reporting a failure (ChangeMessageVisibility, the DLQ send) needs the
 * module, and loading it takes a few hundred milliseconds of a full CPU (more on a small Lambda,
 * whose CPU share is a fraction of one). A record that fails at the deadline minus the worker's
 * margin, the first of the invocation, would load it then, and a small margin left the function
 * timing out before it answered (issue 22). {@link preloadSqsModule} starts the load in the
 * background ahead of that moment; a batch that ends before never pays for it. The loader itself
 * is lib/core/sqs-module.ts's, shared with the client's sends.
 */
import { loadSqsModule, sqsModuleRequested } from '../core/sqs-module.ts';

export { loadSqsModule };

/**
 * Milliseconds before the deadline minus the margin at which the worker starts loading the SQS
 * module in the background, when it is not loaded yet: room for the import on the smallest
 * Lambda (128 MB, about 1/14 of a vCPU; the import takes 150-300 ms of a full core, checked on
 * Node 24, 2026-12-01), so it is ready when the run limits fire.
 */
export const SQS_PRELOAD_LEAD_MS = 5_000;

const noop = (): void => {};

/**
 * Makes the module ready before `byMs` milliseconds from now (the invocation's deadline minus the
 * worker's margin, when run limits fire and failures are reported): starts its load in the
 * background `leadMs` before that, at once when that is already past. Nothing when the module is
 * loaded or loading, or `byMs` is not finite (no deadline known). A failed background load is left
 * to the next {@link loadSqsModule} call to retry and report. Never throws.
 *
 * @returns cancels the timer when the invocation ends before it fired (a started load goes on).
 */
export function preloadSqsModule(byMs: number, leadMs: number = SQS_PRELOAD_LEAD_MS): () => void {
  if (sqsModuleRequested() || !Number.isFinite(byMs)) return noop;
  const start = (): void => {
    loadSqsModule().catch(noop);
  };
  const delayMs = byMs - leadMs;
  if (delayMs <= 0) {
    start();
    return noop;
  }
  const timer = setTimeout(start, delayMs);
  // A pending preload never keeps a process (a test, a local host) alive.
  timer.unref?.();
  return () => clearTimeout(timer);
}
