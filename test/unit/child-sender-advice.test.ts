/**
 * What a worker says when a job's child (or a batch's completion job) names a queue the worker
 * cannot send to: the CDK fix on its JobQueue, not a producer's `queueUrls` advice.
 */
import { describe, expect, it } from 'vitest';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { createJobClientChildSender } from '../../lib/runtime/child-sender.ts';
import { ChildRejectedError } from '../../lib/runtime/worker-errors.ts';

function senderFor(env: Record<string, string>) {
  return createJobClientChildSender({
    source: '/worker',
    queueUrls: undefined,
    env,
    sqs: {
      send: () => Promise.reject(new Error('no send expected: the queue is refused before sending')),
    },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
}

const body = JSON.stringify(
  createEnvelope({ type: 'report.summary', source: '/worker', id: 'c1', data: {} }),
);

describe('a worker refusing a queue it cannot send to', () => {
  it("its own queue: names jobQueue.addEnqueueTarget of the worker's own queue", async () => {
    const sender = senderFor({ JOBS_QUEUE_NAME: 'work' });
    const refused = sender.sendEnvelope?.('work', body);
    await expect(refused).rejects.toBeInstanceOf(ChildRejectedError);
    await expect(refused).rejects.toThrow(
      `unknown queue "work" (this worker can send to: none); it is this worker's own queue, which a worker sends to only as its own enqueue target: jobQueue.addEnqueueTarget('work', jobQueue.queue) on its JobQueue in your CDK app, which sets JOBS_QUEUE_URL_WORK and grants SendMessage`,
    );
  });

  it('another queue: names the enqueue target to add, never the producer-side queueUrls', async () => {
    const sender = senderFor({
      JOBS_QUEUE_NAME: 'work',
      JOBS_QUEUE_URL_WORK: 'https://sqs.us-east-1.amazonaws.com/123456789012/work',
    });
    const refused = sender.sendEnvelope?.('report-summary', body);
    await expect(refused).rejects.toThrow(
      /unknown queue "report-summary" \(this worker can send to: work\); make it an enqueue target of this worker's JobQueue in your CDK app: jobQueue\.addEnqueueTarget\('report-summary', <the JobQueue of 'report-summary'>\.queue\) or the enqueueTargets prop, which sets JOBS_QUEUE_URL_REPORT_SUMMARY and grants SendMessage/,
    );
    await expect(refused).rejects.not.toThrow(/queueUrls/);
  });
});
