/**
 * The stack `cdk init app` generated, with sqs-jobs added: an idempotency table, an alarm topic,
 * a standard `greetings` JobQueue with its worker, and a dashboard. CommonJS, so `__dirname`.
 */
import * as path from 'node:path';
import * as cdk from 'aws-cdk-lib/core';
import type { Construct } from 'constructs';
import { AlarmTopic, IdempotencyTable, JobQueue, JobsDashboard } from 'sqs-jobs/cdk';
import { greet } from '../jobs/greet';

export class CdkInitAppStack extends cdk.Stack {
  constructor(scope: Construct, id: string, props?: cdk.StackProps) {
    super(scope, id, props);

    const idempotency = new IdempotencyTable(this, 'Idempotency', {
      removalPolicy: cdk.RemovalPolicy.DESTROY,
    });
    const alarms = new AlarmTopic(this, 'Alarms');
    const greetings = new JobQueue(this, 'Greetings', {
      name: 'greetings',
      entry: 'workers/greetings.ts',
      projectRoot: path.join(__dirname, '..'),
      jobs: [greet],
      idempotencyTable: idempotency.table,
      alarmTopic: alarms.topic,
    });
    new JobsDashboard(this, 'Dashboard', { queues: [greetings] });
    new cdk.CfnOutput(this, 'GreetingsQueueUrl', { value: greetings.queue.queueUrl });
    new cdk.CfnOutput(this, 'IdempotencyTableName', { value: idempotency.tableName });
  }
}
