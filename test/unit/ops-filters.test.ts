/** Selecting dead letters by evidence: patterns, OR within a criterion, AND across criteria. */
import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { compileFilter, describeFilter, isEmptyFilter, matchesPattern } from '../../lib/ops/filters.ts';

function message(attributes: Record<string, string>, body = '{"id":"job-1","type":"orders.capture"}') {
  const raw: Message = {
    MessageId: 'm-1',
    ReceiptHandle: 'rh-1',
    Body: body,
    MessageAttributes: Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
    ),
  };
  return toDeadLetterMessage(raw);
}

describe('matchesPattern', () => {
  it('matches exactly, case-sensitively, without a wildcard', () => {
    expect(matchesPattern('HTTP 404', 'HTTP 404')).toBe(true);
    expect(matchesPattern('HTTP 404', 'http 404')).toBe(false);
    expect(matchesPattern('HTTP 4040', 'HTTP 404')).toBe(false);
    expect(matchesPattern(undefined, 'HTTP 404')).toBe(false);
  });

  it('treats * as any run of characters and everything else literally', () => {
    expect(matchesPattern('attempts-used-up: HTTP 503', 'attempts-used-up*')).toBe(true);
    expect(matchesPattern('orders.capture', 'orders.*')).toBe(true);
    expect(matchesPattern('ordersXcapture', 'orders.*')).toBe(false);
    expect(matchesPattern('a(b)+c', 'a(b)+*')).toBe(true);
    expect(matchesPattern('line one\nline two', 'line*two')).toBe(true);
    expect(matchesPattern('', '*')).toBe(true);
  });
});

describe('compileFilter', () => {
  const capture404 = message({
    JobType: 'orders.capture',
    ErrorReason: 'HTTP 404',
    ErrorName: 'PermanentError',
  });
  const refund503 = message(
    { JobType: 'orders.refund', ErrorReason: 'attempts-used-up: HTTP 503', ErrorName: 'TransientError' },
    '{"id":"job-2"}',
  );
  const bare = message({}, '{"id":"job-3","type":"orders.capture"}');

  it('selects everything when empty', () => {
    const all = compileFilter({});
    expect([capture404, refund503, bare].every(all)).toBe(true);
    expect(isEmptyFilter({ jobTypes: [], reasons: [] })).toBe(true);
  });

  it('ORs the patterns of one criterion and ANDs the criteria', () => {
    const either = compileFilter({ reasons: ['HTTP 404', 'attempts-used-up*'] });
    expect([capture404, refund503, bare].map(either)).toEqual([true, true, false]);
    const both = compileFilter({ reasons: ['HTTP 404', 'attempts-used-up*'], jobTypes: ['orders.refund'] });
    expect([capture404, refund503, bare].map(both)).toEqual([false, true, false]);
  });

  it('selects by error name and job id, and finds messages without evidence as no-evidence', () => {
    expect([capture404, refund503, bare].map(compileFilter({ errorNames: ['Transient*'] }))).toEqual([
      false,
      true,
      false,
    ]);
    expect([capture404, refund503, bare].map(compileFilter({ jobIds: ['job-3'] }))).toEqual([
      false,
      false,
      true,
    ]);
    // The body's type stands in for a missing JobType attribute.
    expect(
      [capture404, refund503, bare].map(
        compileFilter({ reasons: ['no-evidence'], jobTypes: ['orders.capture'] }),
      ),
    ).toEqual([false, false, true]);
  });
});

describe('describeFilter', () => {
  it('says what is selected', () => {
    expect(describeFilter({})).toBe('all messages');
    expect(
      describeFilter({ jobTypes: ['orders.*'], reasons: ['HTTP 404', 'HTTP 410'], jobIds: ['j-1'] }),
    ).toBe('job type orders.* and reason HTTP 404 or HTTP 410 and job id j-1');
  });
});
