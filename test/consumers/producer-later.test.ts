/**
 * A job sent for later from the installed tarball: examples/producer-js (plain JavaScript, the
 * machine's Node 20) imports `sqs-jobs/client` and sends a job due in two hours, with fake
 * Scheduler, DynamoDB and SQS clients (the `scheduler`, `dynamodb` and `sqs` options): the
 * published build loads its scheduled path (a dynamic import inside dist/) and makes one
 * PutItem of the job's state and one CreateSchedule, and nothing of it is loaded by a producer
 * that only sends now. (Runs beside cdk-app.test.ts; it writes only its own file.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { expectSuccess, report, run, seconds } from './support.ts';

const { producerJs } = inject('consumers');
/** The machine's Node 20: what a producer service without the repo's bundled Node 24 runs on. */
const SYSTEM_NODE = '/usr/bin/node';

const SCRIPT = `import { JobClient, schedulingFromEnv } from 'sqs-jobs/client';
import { sendReceipt } from './jobs.js';

const calls = [];
const fake = (name) => ({
  async send(command) {
    calls.push({ client: name, command: command.constructor.name, input: command.input });
    if (name === 'sqs') return { Successful: command.input.Entries.map((e) => ({ Id: e.Id, MessageId: 'm-1' })) };
    return {};
  },
});
const client = new JobClient({
  source: '/services/shop-js',
  queueUrls: { emails: 'https://sqs.eu-west-1.amazonaws.com/123456789012/emails' },
  sqs: fake('sqs'),
  scheduler: fake('scheduler'),
  dynamodb: fake('dynamodb'),
  scheduling: schedulingFromEnv({
    JOBS_SCHEDULE_GROUP_EMAILS: 'shop-emails',
    JOBS_SCHEDULER_ROLE_ARN_EMAILS: 'arn:aws:iam::123456789012:role/emails-scheduler',
    JOBS_SCHEDULE_DLQ_ARN_EMAILS: 'arn:aws:sqs:eu-west-1:123456789012:emails-schedule-dlq',
    JOBS_IDEMPOTENCY_TABLE: 'jobs-idempotency',
  }),
});
await client.send(sendReceipt, { orderId: 'now' });
const loadedBefore = calls.length;
const later = await client.send(sendReceipt, { orderId: 'o-1' }, { id: 'receipt-o-1', delayMs: 2 * 3600 * 1000 });
console.log(JSON.stringify({ node: process.version, later, loadedBefore, calls }));
`;

describe('examples/producer-js sends a job for later from the tarball', () => {
  it('one PutItem of its state, one CreateSchedule of the templated SQS target, on Node 20', async () => {
    writeFileSync(join(producerJs, 'send-later.mjs'), SCRIPT);
    const result = expectSuccess(
      'send-later.mjs',
      await run(SYSTEM_NODE, ['send-later.mjs'], { cwd: producerJs }),
    );
    const out = JSON.parse(result.stdout) as {
      node: string;
      later: { via: string; scheduleName: string };
      loadedBefore: number;
      calls: { client: string; command: string; input: Record<string, unknown> }[];
    };
    report(`producer-js sent a job for later (${out.node}) in ${seconds(result.ms)}`);
    expect(out.node).toMatch(/^v20\./);
    expect(out.loadedBefore).toBe(1);
    expect(out.calls.map((c) => `${c.client} ${c.command}`)).toEqual([
      'sqs SendMessageBatchCommand',
      'dynamodb PutItemCommand',
      'scheduler CreateScheduleCommand',
    ]);
    expect(out.later).toMatchObject({
      via: 'schedule',
      scheduleName: expect.stringMatching(/^sj-[0-9a-f]{56}$/),
    });
    expect(out.calls[2]?.input).toMatchObject({
      GroupName: 'shop-emails',
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: 'arn:aws:sqs:eu-west-1:123456789012:emails',
        DeadLetterConfig: { Arn: 'arn:aws:sqs:eu-west-1:123456789012:emails-schedule-dlq' },
      },
    });
  });
});
