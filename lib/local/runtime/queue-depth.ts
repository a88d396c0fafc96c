/**
 * How full a queue of the running stack is ({@link readQueueDepth}: what the CloudWatch metrics
 * the alarms watch would show), and waiting until the watched queues are drained
 * ({@link waitUntilDrained}).
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { RunningEmulators } from '../emulators.ts';
import { DrainTimeoutError } from '../errors.ts';
import type { QueueDepth } from './api.ts';

/**
 * Depth of the queue `queue` from GetQueueAttributes; the age of its oldest message when the
 * embedded fauxqs can tell (undefined on external endpoints).
 */
export async function readQueueDepth(
  sqs: SQSClient,
  emulators: RunningEmulators,
  queue: { readonly url: string; readonly name: string },
): Promise<QueueDepth> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue.url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  let oldestMessageAgeMs: number | undefined;
  const inspected = emulators.fauxqs?.inspectQueue(queue.name);
  if (inspected) {
    const sent = [
      ...inspected.messages.ready,
      ...inspected.messages.delayed,
      ...inspected.messages.inflight.map((e) => e.message),
    ].map((m) => m.sentTimestamp);
    oldestMessageAgeMs = sent.length === 0 ? 0 : Math.max(0, Date.now() - Math.min(...sent));
  }
  return {
    url: queue.url,
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    notVisible: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    oldestMessageAgeMs,
  };
}

/** What {@link waitUntilDrained} watches. */
export interface DrainWatch {
  /** URLs of the watched queues. */
  readonly urls: readonly string[];
  /** Depth of a queue by URL. */
  depth(url: string): Promise<QueueDepth>;
  /** True while a batch is being processed. */
  busy(): boolean;
  /** Give up after this many milliseconds. */
  readonly timeoutMs: number;
  /** Between depth checks, in milliseconds. */
  readonly pollIntervalMs: number;
}

/**
 * Resolves when the watched queues hold no message (visible, in flight or delayed) and no batch
 * is being processed, twice in a row. @throws {DrainTimeoutError} after `timeoutMs`.
 */
export async function waitUntilDrained(watch: DrainWatch): Promise<void> {
  const deadline = Date.now() + watch.timeoutMs;
  let quiet = 0;
  let depths: QueueDepth[] = [];
  for (;;) {
    depths = await Promise.all(watch.urls.map((url) => watch.depth(url)));
    const busy = watch.busy();
    const empty = depths.every((d) => d.visible + d.notVisible + d.delayed === 0);
    quiet = empty && !busy ? quiet + 1 : 0;
    if (quiet >= 2) return;
    if (Date.now() > deadline) {
      throw new DrainTimeoutError(
        `queues not drained after ${watch.timeoutMs} ms: ${depths.map((d) => `${d.url} visible=${d.visible} notVisible=${d.notVisible} delayed=${d.delayed}`).join('; ')}${busy ? '; batches in progress' : ''}`,
        { context: { depths } },
      );
    }
    await new Promise((r) => setTimeout(r, watch.pollIntervalMs));
  }
}
