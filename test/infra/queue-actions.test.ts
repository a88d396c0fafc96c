/**
 * Least privilege on the queues: the SQS actions JobQueue grants a worker are exactly what its
 * event source mapping needs plus the SQS commands the worker sends, read from the sources of
 * lib/runtime and lib/client (the children's JobClient), so a new command without its grant
 * fails here, and so does a grant nothing uses. No synth: the synthesized grants are checked in
 * least-privilege.test.ts.
 */
import * as sqsClient from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { CONSUME_QUEUE_ACTIONS, SEND_QUEUE_ACTIONS } from '../../lib/constructs/job-queue/grants.ts';
import { sourceTexts } from './helpers.ts';

/** What Lambda's SQS poller does with the function's role: receive, delete, read attributes (services-sqs-configure). */
const EVENT_SOURCE_MAPPING_ACTIONS = ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'];

/** `sqs:<Action>` of every `new XCommand(` whose X is an `@aws-sdk/client-sqs` command, batch forms folded into their action. */
function sqsActionsSent(): string[] {
  const actions = new Set<string>();
  for (const dir of ['lib/runtime', 'lib/client']) {
    for (const text of sourceTexts(dir).values()) {
      for (const m of text.matchAll(/new\s+(?:\w+\.)?(\w+)Command\s*\(/g)) {
        if (!(`${m[1]}Command` in sqsClient)) continue;
        // SendMessageBatch is allowed by sqs:SendMessage; batch actions have no permission of their own.
        actions.add(`sqs:${m[1]!.replace(/Batch$/, '')}`);
      }
    }
  }
  return [...actions].sort();
}

describe('queue grants', () => {
  it('the worker sends ChangeMessageVisibility (its own queue) and SendMessage / SendMessageBatch (DLQ, children), nothing else', () => {
    expect(sqsActionsSent()).toEqual(['sqs:ChangeMessageVisibility', 'sqs:SendMessage']);
  });

  it('grants exactly those plus what the event source mapping needs: no GetQueueUrl anywhere, no GetQueueAttributes on send-only queues', () => {
    expect([...SEND_QUEUE_ACTIONS]).toEqual(['sqs:SendMessage']);
    const granted = new Set([...CONSUME_QUEUE_ACTIONS, ...SEND_QUEUE_ACTIONS]);
    expect([...granted].sort()).toEqual(
      [...new Set([...EVENT_SOURCE_MAPPING_ACTIONS, ...sqsActionsSent()])].sort(),
    );
  });
});
