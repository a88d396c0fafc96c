/** Oldest-message age from CloudWatch, queue ARNs, and the text rendering of queue stats. */
import { describe, expect, it } from 'vitest';
import {
  cloudWatchOldestAges,
  MAX_METRIC_QUERIES_PER_REQUEST,
  type MetricDataRequest,
  type MetricDataResponse,
  unknownOldestAges,
} from '../../lib/ops/oldest-age.ts';
import { parseQueueArn, type QueueStats } from '../../lib/ops/stats.ts';
import { formatAge, renderStats, statsNotes } from '../../lib/ops/stats-format.ts';

const NOW = Date.parse('2026-11-30T10:45:30Z');

function fakeCloudWatch(answer: (request: MetricDataRequest, call: number) => MetricDataResponse) {
  const requests: MetricDataRequest[] = [];
  return {
    requests,
    reader: {
      async getMetricData(request: MetricDataRequest) {
        requests.push(request);
        return answer(request, requests.length);
      },
    },
  };
}

describe('cloudWatchOldestAges', () => {
  it('asks AWS/SQS ApproximateAgeOfOldestMessage, Maximum per minute of the last 15 min, per QueueName', async () => {
    const cw = fakeCloudWatch(() => ({ MetricDataResults: [] }));
    await cloudWatchOldestAges(cw.reader, { nowMs: () => NOW }).read(['payments', 'booking.fifo']);
    expect(cw.requests).toEqual([
      {
        MetricDataQueries: ['payments', 'booking.fifo'].map((name, i) => ({
          Id: `q${i}`,
          MetricStat: {
            Metric: {
              Namespace: 'AWS/SQS',
              MetricName: 'ApproximateAgeOfOldestMessage',
              Dimensions: [{ Name: 'QueueName', Value: name }],
            },
            Period: 60,
            Stat: 'Maximum',
          },
          ReturnData: true,
        })),
        StartTime: new Date(NOW - 15 * 60_000),
        EndTime: new Date(NOW),
        ScanBy: 'TimestampDescending',
      },
    ]);
  });

  it('takes the latest datapoint of each queue across pages, and says so when there is none', async () => {
    const cw = fakeCloudWatch((_, call) =>
      call === 1
        ? {
            MetricDataResults: [
              { Id: 'q0', Timestamps: [new Date('2026-11-30T10:40:00Z')], Values: [600] },
              { Id: 'q1', Timestamps: [], Values: [] },
            ],
            NextToken: 'page-2',
          }
        : {
            MetricDataResults: [
              {
                Id: 'q0',
                Timestamps: [new Date('2026-11-30T10:44:00Z'), new Date('2026-11-30T10:39:00Z')],
                Values: [42, 900],
              },
            ],
          },
    );
    const ages = await cloudWatchOldestAges(cw.reader, { nowMs: () => NOW }).read(['a', 'b']);
    expect(cw.requests.map((r) => r.NextToken)).toEqual([undefined, 'page-2']);
    expect(ages.get('a')).toEqual({ seconds: 42, source: 'cloudwatch', at: '2026-11-30T10:44:00.000Z' });
    expect(ages.get('b')).toMatchObject({ seconds: null, source: null, at: null });
    expect(ages.get('b')?.note).toMatch(
      /^no ApproximateAgeOfOldestMessage datapoint in CloudWatch for the last 15 min/,
    );
  });

  it(`splits more than ${MAX_METRIC_QUERIES_PER_REQUEST} queues into requests, each query id within its request`, async () => {
    const names = Array.from({ length: MAX_METRIC_QUERIES_PER_REQUEST + 2 }, (_, i) => `queue-${i}`);
    const cw = fakeCloudWatch((request) => ({
      MetricDataResults: request.MetricDataQueries.map((q) => ({
        Id: q.Id,
        Timestamps: [new Date(NOW - 60_000)],
        Values: [Number(q.MetricStat.Metric.Dimensions[0]!.Value.split('-')[1])],
      })),
    }));
    const ages = await cloudWatchOldestAges(cw.reader, { nowMs: () => NOW }).read(names);
    expect(cw.requests.map((r) => r.MetricDataQueries.length)).toEqual([MAX_METRIC_QUERIES_PER_REQUEST, 2]);
    expect(ages.get('queue-0')?.seconds).toBe(0);
    expect(ages.get(`queue-${MAX_METRIC_QUERIES_PER_REQUEST + 1}`)?.seconds).toBe(
      MAX_METRIC_QUERIES_PER_REQUEST + 1,
    );
  });

  it('turns a CloudWatch failure into a note on every age, never a number and never a throw', async () => {
    const denied = Object.assign(new Error('not authorized to perform: cloudwatch:GetMetricData'), {
      name: 'AccessDenied',
    });
    const ages = await cloudWatchOldestAges({
      getMetricData: async () => {
        throw denied;
      },
    }).read(['a']);
    expect(ages.get('a')).toEqual({
      seconds: null,
      source: null,
      at: null,
      note: 'CloudWatch GetMetricData failed (AccessDenied: not authorized to perform: cloudwatch:GetMetricData); it needs cloudwatch:GetMetricData',
    });
  });

  it('unknownOldestAges gives every queue the same reason', async () => {
    const ages = await unknownOldestAges('local endpoint').read(['a', 'b']);
    expect([...ages.values()]).toEqual([
      { seconds: null, source: null, at: null, note: 'local endpoint' },
      { seconds: null, source: null, at: null, note: 'local endpoint' },
    ]);
  });
});

describe('parseQueueArn', () => {
  it('splits SQS queue ARNs of any partition and refuses other ARNs', () => {
    expect(parseQueueArn('arn:aws:sqs:eu-west-1:123456789012:booking-dlq.fifo')).toEqual({
      partition: 'aws',
      region: 'eu-west-1',
      accountId: '123456789012',
      name: 'booking-dlq.fifo',
    });
    expect(parseQueueArn('arn:aws-cn:sqs:cn-north-1:1:q')?.partition).toBe('aws-cn');
    expect(parseQueueArn('arn:aws:sns:eu-west-1:1:topic')).toBeUndefined();
    expect(parseQueueArn('https://sqs.eu-west-1.amazonaws.com/1/q')).toBeUndefined();
    expect(parseQueueArn('arn:aws:sqs:eu-west-1:1:')).toBeUndefined();
  });
});

describe('stats text', () => {
  it.each([
    [0, '0s'],
    [59.9, '59s'],
    [60, '1m 00s'],
    [192, '3m 12s'],
    [3_599, '59m 59s'],
    [3_600, '1h 00m'],
    [7_500, '2h 05m'],
    [86_400 * 3 + 3_600 * 4 + 59, '3d 4h'],
  ])('formatAge(%d) = %s', (seconds, text) => {
    expect(formatAge(seconds)).toBe(text);
  });

  const row = (name: string, extra: Partial<QueueStats> = {}): QueueStats => ({
    name,
    url: `https://sqs.eu-west-1.amazonaws.com/1/${name}`,
    arn: `arn:aws:sqs:eu-west-1:1:${name}`,
    fifo: false,
    visible: 0,
    inFlight: 0,
    delayed: 0,
    oldestMessageAge: { seconds: null, source: null, at: null, note: 'local endpoint' },
    deadLetterQueue: null,
    deadLetterQueueNote: 'no redrive policy: SQS moves no failed message to a dead-letter queue',
    ...extra,
  });

  it('says a note shared by every queue once, and names the queues of a note some share', () => {
    const withDlq = row('payments', {
      deadLetterQueue: {
        name: 'payments-dlq',
        url: 'u',
        arn: 'a',
        maxReceiveCount: 5,
        visible: 3,
        inFlight: 2,
        delayed: 0,
      },
    });
    const { deadLetterQueueNote: _, ...withDlqNoNote } = withDlq;
    const notes = statsNotes({ at: 'now', queues: [withDlqNoNote, row('emails'), row('sms')] });
    expect(notes).toEqual([
      'oldest: n/a: local endpoint',
      'emails, sms: no redrive policy: SQS moves no failed message to a dead-letter queue',
    ]);
    const text = renderStats({ at: 'now', queues: [withDlqNoNote, row('emails')] });
    expect(text).toMatch(/^payments +standard +0 +0 +0 +n\/a +payments-dlq: 3 \(\+2 in flight\)$/m);
    expect(text).toMatch(/^emails +standard +0 +0 +0 +n\/a +none$/m);
  });

  it('shows a CloudWatch age with the minute of its datapoint and explains where it comes from', () => {
    const text = renderStats({
      at: 'now',
      queues: [
        row('payments', {
          oldestMessageAge: { seconds: 125, source: 'cloudwatch', at: '2026-11-30T10:44:00.000Z' },
        }),
      ],
    });
    expect(text).toMatch(/^payments +standard +0 +0 +0 +2m 05s @10:44Z +none$/m);
    expect(text).toContain(
      'note: oldest: CloudWatch ApproximateAgeOfOldestMessage, Maximum of the latest 1-minute',
    );
  });
});
