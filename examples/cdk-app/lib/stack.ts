/**
 * The example stack: a FIFO `orders` queue and a standard `emails` queue, each with its DLQ,
 * Lambda worker and alarms (`JobQueue`), one idempotency table for both, one alarm topic, a
 * dashboard, and outputs for producers (queue URLs) and operators (DLQ URLs).
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AlarmTopic, IdempotencyTable, JobQueue, JobsDashboard } from 'sqs-jobs/cdk';
import { sendReceipt } from '../jobs/emails.ts';
import { recordOrderStep } from '../jobs/orders.ts';

/** This app's root: worker entries are relative to it, its package-lock.json drives bundling. */
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export class OrdersStack extends Stack {
  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    // An example: the table goes with the stack. Keep the default (RETAIN) in production.
    const idempotency = new IdempotencyTable(this, 'Idempotency', { removalPolicy: RemovalPolicy.DESTROY });
    const alarms = new AlarmTopic(this, 'Alarms');

    // `jobs` (the ones the entry wires into createWorker) set maxAttempts and the time limits.
    const orders = new JobQueue(this, 'Orders', {
      name: 'orders',
      fifo: true,
      entry: 'workers/orders.ts',
      projectRoot: PROJECT_ROOT,
      jobs: [recordOrderStep],
      idempotencyTable: idempotency.table,
      alarmTopic: alarms.topic,
    });
    const emails = new JobQueue(this, 'Emails', {
      name: 'emails',
      entry: 'workers/emails.ts',
      projectRoot: PROJECT_ROOT,
      jobs: [sendReceipt],
      maxConcurrency: 5,
      idempotencyTable: idempotency.table,
      alarmTopic: alarms.topic,
    });
    // The shipped step chains a receipt: the orders worker gets JOBS_QUEUE_URL_EMAILS and may send there.
    orders.addEnqueueTarget(emails.name, emails.queue);

    new JobsDashboard(this, 'Dashboard', { queues: [orders, emails] });

    for (const [id, q] of [
      ['Orders', orders],
      ['Emails', emails],
    ] as const) {
      new CfnOutput(this, `${id}QueueUrl`, {
        value: q.queue.queueUrl,
        description: `producers send ${q.name} jobs here`,
      });
      new CfnOutput(this, `${id}DlqUrl`, {
        value: q.deadLetterQueue.queueUrl,
        description: `${q.name} dead letters`,
      });
    }
    new CfnOutput(this, 'IdempotencyTableName', { value: idempotency.tableName });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarms.topic.topicArn });
  }
}
