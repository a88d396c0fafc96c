/**
 * The console's setups without a browser: what it reads from a deployed stack's outputs file, how
 * alarms and CloudWatch completions are matched to queues, and the workers' completions counted
 * from their EMF lines locally. (Part of the browser suite: the console's own tests stay together.)
 */
import { describe, expect, it } from 'vitest';
import {
  alarmQueueId,
  cloudWatchAlarms,
  cloudWatchCompletions,
  stackOutputs,
} from '../../lib/console/aws.ts';
import { lookupKey } from '../../lib/console/jobs.ts';
import { EmfCompletions } from '../../lib/console/local.ts';
import { InvalidQueueUrlError } from '../../lib/ops/errors.ts';

const URL_BASE = 'https://sqs.eu-west-1.amazonaws.com/123456789012';

describe('stack outputs (cdk deploy --outputs-file)', () => {
  const outputs = {
    SqsJobs: {
      BookingQueueUrl: `${URL_BASE}/SqsJobs-Booking-queue.fifo`,
      BookingDlqUrl: `${URL_BASE}/SqsJobs-Booking-dlq.fifo`,
      PaymentsQueueUrl: `${URL_BASE}/SqsJobs-Payments`,
      PaymentsQueueArn: 'arn:aws:sqs:eu-west-1:123456789012:SqsJobs-Payments',
      IdempotencyTableName: 'SqsJobs-IdempotencyTable',
      AppTableName: 'SqsJobs-App',
    },
  };

  it('reads every <Queue>QueueUrl with its <Queue>DlqUrl, and the idempotency table', () => {
    expect(stackOutputs(outputs)).toEqual({
      stackName: 'SqsJobs',
      queues: [
        {
          id: 'Booking',
          url: `${URL_BASE}/SqsJobs-Booking-queue.fifo`,
          dlqUrl: `${URL_BASE}/SqsJobs-Booking-dlq.fifo`,
        },
        { id: 'Payments', url: `${URL_BASE}/SqsJobs-Payments` },
      ],
      idempotencyTables: ['SqsJobs-IdempotencyTable'],
    });
  });

  it('needs --stack for a file of several stacks, and refuses what is not a queue URL', () => {
    const two = { ...outputs, Other: { XQueueUrl: `${URL_BASE}/x` } };
    expect(() => stackOutputs(two)).toThrow(/the stacks SqsJobs, Other: pick one with --stack/);
    expect(stackOutputs(two, 'Other').queues).toEqual([{ id: 'X', url: `${URL_BASE}/x` }]);
    expect(() => stackOutputs({ S: { AQueueUrl: 'arn:aws:sqs:eu-west-1:1:a' } })).toThrow(
      InvalidQueueUrlError,
    );
    expect(() => stackOutputs({ S: { AppTableName: 't' } })).toThrow(/no <Queue>QueueUrl output/);
    expect(() => stackOutputs([])).toThrow(/cdk deploy --outputs-file/);
  });
});

describe('alarms and completions from CloudWatch', () => {
  const queues = [
    { id: 'Booking', url: `${URL_BASE}/SqsJobs-Booking-queue.fifo` },
    { id: 'Payments', url: `${URL_BASE}/SqsJobs-Payments` },
  ];
  const names = new Map([
    ['SqsJobs-Booking-queue.fifo', 'Booking'],
    ['SqsJobs-Booking-dlq.fifo', 'Booking'],
    ['SqsJobs-Payments', 'Payments'],
  ]);

  it('matches an alarm to its queue by QueueName (queue or DLQ), the Queue dimension, or a metric-math metric', () => {
    expect(
      alarmQueueId({ Dimensions: [{ Name: 'QueueName', Value: 'SqsJobs-Booking-dlq.fifo' }] }, queues, names),
    ).toBe('Booking');
    expect(alarmQueueId({ Dimensions: [{ Name: 'Queue', Value: 'payments' }] }, queues, names)).toBe(
      'Payments',
    );
    expect(
      alarmQueueId(
        {
          Metrics: [
            {
              Id: 'm',
              MetricStat: {
                Metric: { Dimensions: [{ Name: 'QueueName', Value: 'SqsJobs-Payments' }] },
                Period: 60,
                Stat: 'Sum',
              },
            },
          ],
        },
        queues,
        names,
      ),
    ).toBe('Payments');
    expect(
      alarmQueueId({ Dimensions: [{ Name: 'FunctionName', Value: 'f' }] }, queues, names),
    ).toBeUndefined();
  });

  it('lists the stack alarms, ALARM first', async () => {
    const client = {
      send: async () => ({
        MetricAlarms: [
          {
            AlarmName: 'SqsJobs-PaymentsAge',
            StateValue: 'OK',
            Dimensions: [{ Name: 'QueueName', Value: 'SqsJobs-Payments' }],
          },
          {
            AlarmName: 'SqsJobs-BookingDlqDepth',
            StateValue: 'ALARM',
            StateReason: 'Threshold Crossed',
            MetricName: 'ApproximateNumberOfMessagesVisible',
            Dimensions: [{ Name: 'QueueName', Value: 'SqsJobs-Booking-dlq.fifo' }],
          },
        ],
      }),
    };
    const alarms = await cloudWatchAlarms(client as never, 'SqsJobs-').read(queues, names);
    expect(alarms.map((a) => [a.name, a.state, a.queueId])).toEqual([
      ['SqsJobs-BookingDlqDepth', 'ALARM', 'Booking'],
      ['SqsJobs-PaymentsAge', 'OK', 'Payments'],
    ]);
  });

  it('reads JobCompleted per minute per queue, the Queue dimension found with ListMetrics', async () => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 30);
    const sent: { constructor: { name: string }; input: Record<string, unknown> }[] = [];
    const client = {
      send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        sent.push(command);
        if (command.constructor.name === 'ListMetricsCommand') {
          return {
            Metrics: [
              { Dimensions: [{ Name: 'Queue', Value: 'payments' }] },
              {
                Dimensions: [
                  { Name: 'Queue', Value: 'payments' },
                  { Name: 'JobType', Value: 'payments.capture' },
                ],
              },
            ],
          };
        }
        return {
          MetricDataResults: [
            { Id: 'q0', Timestamps: [new Date(Date.UTC(2026, 10, 30, 11, 58))], Values: [42] },
          ],
        };
      },
    };
    const read = await cloudWatchCompletions(client as never, { nowMs: () => now }).read(queues, 3);
    expect(read.t).toEqual([
      Date.UTC(2026, 10, 30, 11, 57),
      Date.UTC(2026, 10, 30, 11, 58),
      Date.UTC(2026, 10, 30, 11, 59),
    ]);
    expect(read.series).toEqual({ Payments: [null, 42, null] });
    expect(read.notes).toEqual(['Booking: no SqsJobs JobCompleted metric found for it yet']);
    const queries = sent[1]?.input.MetricDataQueries as
      | { MetricStat: { Metric: { Dimensions: unknown } } }[]
      | undefined;
    expect(queries?.[0]?.MetricStat.Metric.Dimensions).toEqual([{ Name: 'Queue', Value: 'payments' }]);
  });
});

describe('local completions and job keys', () => {
  it("counts the workers' JobCompleted per Queue from their EMF lines, once per line", () => {
    const emf = new EmfCompletions();
    const line = (queue: string, completed: number) =>
      JSON.stringify({
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [
            {
              Namespace: 'SqsJobs',
              Dimensions: [['Queue'], ['Queue', 'JobType']],
              Metrics: [{ Name: 'JobCompleted', Unit: 'Count' }],
            },
          ],
        },
        Queue: queue,
        JobType: `${queue}.job`,
        JobCompleted: completed,
      });
    emf.add(line('payments', 3));
    emf.add(line('payments', 2));
    emf.add(line('booking', 1));
    emf.add('{"level":"INFO","message":"JobCompleted"}');
    emf.add('not json');
    expect(Object.fromEntries(emf.byQueueName())).toEqual({ payments: 5, booking: 1 });
  });

  it('looks a job up by its key, or by envelope source and id (the default key)', () => {
    expect(lookupKey({ type: 't', key: 'k-1' })).toBe('k-1');
    expect(lookupKey({ type: 't', source: '/checkout', id: 'ord-42' })).toBe('/checkout\nord-42');
    expect(() => lookupKey({ type: 't' })).toThrow(RangeError);
  });
});
