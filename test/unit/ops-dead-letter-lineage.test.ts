/**
 * The lineage of a dead letter, read from its body (the original envelope): SQS allows 10 message
 * attributes and the evidence uses them, but the body carries `causationid`, `rootid`,
 * `parentjob`, `correlationid` and `traceparent`. `dlq show`, `dlq list` samples and the console's
 * message view show it.
 */
import { describe, expect, it } from 'vitest';
import { toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { messageJson, renderList, renderMessage } from '../../lib/ops/format.ts';
import { summarizeDeadLetters } from '../../lib/ops/summary.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const body = JSON.stringify({
  specversion: '1.0',
  id: 'e-1',
  source: '/sqs-jobs/booking',
  type: 'notifications.send-email',
  time: '2026-11-30T10:00:00.000Z',
  datacontenttype: 'application/json',
  data: { bookingId: 'b-1' },
  correlationid: 'order-42',
  causationid: 'i-1',
  rootid: 'book-1',
  parentjob: 'booking.issue-invoice#/sqs-jobs/booking\ni-1',
  traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`,
});
const message = toDeadLetterMessage({
  MessageId: 'm-1',
  ReceiptHandle: 'r-1',
  Body: body,
  MessageAttributes: {
    ErrorReason: { DataType: 'String', StringValue: 'HTTP 400' },
    ErrorName: { DataType: 'String', StringValue: 'PermanentError' },
  },
});

describe('dead letters carry their lineage from the body', () => {
  it('reads it leniently into the job identity', () => {
    expect(message.job).toEqual({
      id: 'e-1',
      source: '/sqs-jobs/booking',
      type: 'notifications.send-email',
      partitionKey: undefined,
      parentId: 'i-1',
      rootId: 'book-1',
      parentJob: 'booking.issue-invoice#/sqs-jobs/booking\ni-1',
      correlationId: 'order-42',
      traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01`,
      traceId: TRACE_ID,
    });
    expect(messageJson(message)).toMatchObject({ job: { rootId: 'book-1', traceId: TRACE_ID } });
  });

  it('dlq show prints the parent, the root, the correlation id, the trace id and the command for the chain', () => {
    const text = renderMessage(message);
    expect(text).toContain('parent job id      i-1');
    expect(text).toContain('parent job         booking.issue-invoice id i-1 (source /sqs-jobs/booking)');
    expect(text).toContain('root job id        book-1');
    expect(text).toContain('correlation id     order-42');
    expect(text).toContain(`trace id           ${TRACE_ID}`);
    expect(text).toContain(
      'follow its chain   sqs-jobs job notifications.send-email --source /sqs-jobs/booking --id e-1',
    );
  });

  it('dlq list names the sample job with its root and correlation id', () => {
    const summary = summarizeDeadLetters([message]);
    expect(summary.groups[0]?.sample).toMatchObject({
      jobId: 'e-1',
      rootJobId: 'book-1',
      correlationId: 'order-42',
      traceId: TRACE_ID,
    });
    const read = {
      queue: {
        name: 'dlq',
        url: 'http://x/1/dlq',
        fifo: false,
        approximateVisible: 1,
        approximateNotVisible: 0,
      },
      messages: [message],
      stoppedBy: 'end' as const,
      notRead: 0,
      release: { released: 1, failed: [] },
    };
    expect(renderList(read as never, summary)).toContain(
      'sample: m-1 (job e-1, root book-1, correlation order-42)',
    );
  });

  it('an envelope without lineage shows none, and a root is its own root in the summary', () => {
    const plain = toDeadLetterMessage({
      MessageId: 'm-2',
      ReceiptHandle: 'r',
      Body: JSON.stringify({ id: 'x-1', source: '/s', type: 't' }),
    });
    expect(plain.job).toEqual({ id: 'x-1', source: '/s', type: 't', partitionKey: undefined });
    expect(renderMessage(plain)).not.toContain('root job id');
    expect(summarizeDeadLetters([plain]).groups[0]?.sample.rootJobId).toBe('x-1');
  });

  it('shows control characters from the body escaped, so a sender cannot drive the operator terminal', () => {
    const hostile = toDeadLetterMessage({
      MessageId: 'm-esc',
      ReceiptHandle: 'r-esc',
      Body: JSON.stringify({
        specversion: '1.0',
        id: 'esc\u001b[2J\u001b[31mID',
        source: '/t\u001b]0;pwned\u0007',
        type: 'notifications.x\u009b31m',
        time: '2026-11-30T10:00:00.000Z',
        data: {},
        correlationid: 'ab\u0000c\nd\u001b[31mRED\u0007',
      }),
      MessageAttributes: { ErrorReason: { DataType: 'String', StringValue: 'HTTP 400' } },
    });
    const read = {
      queue: {
        name: 'dlq',
        url: 'http://x/1/dlq',
        fifo: false,
        approximateVisible: 1,
        approximateNotVisible: 0,
      },
      messages: [hostile],
      stoppedBy: 'end' as const,
      notRead: 0,
      release: { released: 1, failed: [] },
    };
    for (const text of [renderMessage(hostile), renderList(read as never, summarizeDeadLetters([hostile]))]) {
      const controls = [...text].filter((c) => {
        const code = c.charCodeAt(0);
        return (code < 0x20 && c !== '\n' && c !== '\t') || (code >= 0x7f && code <= 0x9f);
      });
      expect(controls).toEqual([]);
    }
    const shown = renderMessage(hostile);
    expect(shown).toContain('job id             esc\\u001b[2J\\u001b[31mID');
    expect(shown).toContain('job source         /t\\u001b]0;pwned\\u0007');
  });
});
