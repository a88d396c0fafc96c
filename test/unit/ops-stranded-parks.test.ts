/**
 * Which DLQ messages a FIFO redrive's verification takes as left behind by the park it was
 * clearing (lib/ops/redrive/stranded-parks.ts): `GroupParked`, first of its group in the read, in a group
 * the redrive moved messages of, and no redriven job come back.
 */
import { describe, expect, it } from 'vitest';
import { type DeadLetterMessage, toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { strandedParkedCommand } from '../../lib/ops/format.ts';
import { groupsOf, strandedParkedHeads } from '../../lib/ops/redrive/stranded-parks.ts';

function dlqMessage(id: string, group: string, reason: string): DeadLetterMessage {
  return toDeadLetterMessage({
    MessageId: id,
    ReceiptHandle: 'rh',
    Body: JSON.stringify({ specversion: '1.0', id: `job-${id}`, source: '/t', type: 'booking.reserve' }),
    Attributes: { MessageGroupId: group },
    MessageAttributes: { ErrorReason: { DataType: 'String', StringValue: reason } },
  });
}

describe('strandedParkedHeads', () => {
  const redrive = {
    groups: groupsOf([
      { messageGroupId: 'user-1' },
      { messageGroupId: 'user-2' },
      { messageGroupId: undefined },
    ]),
    isReturn: (message: DeadLetterMessage) => message.messageId === 'back',
  };

  it('takes a GroupParked message first of a moved group, and nothing behind it', () => {
    const read = [dlqMessage('p3', 'user-1', 'GroupParked'), dlqMessage('p4', 'user-1', 'GroupParked')];
    expect(strandedParkedHeads(read, redrive).map((m) => m.messageId)).toEqual(['p3']);
  });

  it('leaves a group that starts with another reason, a redriven job come back, or that the redrive did not move', () => {
    const read = [
      dlqMessage('blocker', 'user-1', 'PermanentError'),
      dlqMessage('p1', 'user-1', 'GroupParked'),
      dlqMessage('back', 'user-2', 'GroupParked'),
      dlqMessage('p9', 'user-9', 'GroupParked'),
    ];
    expect(strandedParkedHeads(read, redrive)).toEqual([]);
  });

  it('prints a command that a POSIX shell reads back as the same words', () => {
    expect(strandedParkedCommand('http://h:1/0/dlq.fifo', "http://h:1/0/it's.fifo")).toBe(
      "sqs-jobs dlq redrive --dlq-url http://h:1/0/dlq.fifo --target-url 'http://h:1/0/it'\\''s.fifo' --reason GroupParked",
    );
    expect(strandedParkedCommand('http://h:1/0/dlq.fifo', undefined)).toContain('--target-url "$QUEUE"');
  });
});
