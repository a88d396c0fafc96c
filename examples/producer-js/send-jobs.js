#!/usr/bin/env node
/**
 * Sends a few orders: for each customer, the steps of one order (placed → paid → shipped) to
 * the FIFO `orders` queue with the customer id as partition key (so they run in that order),
 * and a receipt job to the standard `emails` queue. Prints what it sent as JSON on stdout.
 *
 *   JOBS_QUEUE_URL_ORDERS=<url> JOBS_QUEUE_URL_EMAILS=<url> node send-jobs.js [--customers 3] [--source /services/shop]
 *
 * Queue URLs come from `JOBS_QUEUE_URL_<NAME>` (the stack outputs `OrdersQueueUrl`,
 * `EmailsQueueUrl`); region, credentials and `AWS_ENDPOINT_URL` are the AWS SDK's usual
 * environment. Exit code 0 when every job was sent, 1 when some were not, 2 on bad usage.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { JobClient, queueUrlsFromEnv } from 'sqs-jobs/client';
import { ORDER_STEPS, recordOrderStep, sendReceipt } from './jobs.js';

const usage =
  'usage: node send-jobs.js [--customers N (1-100, default 3)] [--source URI (default /services/shop-js)]';
let customers;
let source;
try {
  const { values } = parseArgs({
    options: {
      customers: { type: 'string', default: '3' },
      source: { type: 'string', default: '/services/shop-js' },
    },
  });
  customers = Number(values.customers);
  source = values.source;
  if (!Number.isInteger(customers) || customers < 1 || customers > 100)
    throw new Error('--customers must be 1-100');
} catch (error) {
  console.error(`${error.message}\n${usage}`);
  process.exit(2);
}

const client = new JobClient({ source, queueUrls: queueUrlsFromEnv() });
const run = randomUUID().slice(0, 8);
const entries = [];
for (let c = 1; c <= customers; c++) {
  const customerId = `customer-${run}-${c}`;
  const orderId = `order-${run}-${c}`;
  for (const step of ORDER_STEPS) {
    entries.push({ job: recordOrderStep, data: { orderId, step }, options: { partitionKey: customerId } });
  }
  entries.push({ job: sendReceipt, data: { orderId } });
}

try {
  // One call: SendMessageBatch requests per queue, in order per queue, retried where SQS allows.
  const { sent, failed } = await client.sendBatch(entries);
  const describe = (e) => ({
    ...e,
    type: entries[e.index].job.type,
    data: entries[e.index].data,
    partitionKey: entries[e.index].options?.partitionKey,
  });
  const report = { node: process.version, source, sent: sent.map(describe), failed: failed.map(describe) };
  console.log(JSON.stringify(report, null, 2));
  process.exitCode = failed.length > 0 ? 1 : 0;
} catch (error) {
  // JobClientError: the jobs were refused before sending (the message lists every problem).
  console.error(error.message);
  process.exitCode = 1;
}
