/**
 * A chain's links in the idempotency records, on the emulators (fauxqs, dynalite) with the
 * worker's default store: a child's record names its parent (`parentJob`), a completed parent's
 * record its children (`childJobs`), and `sqs-jobs job` walks them, reading the DLQs without
 * consuming anything.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { PermanentError } from '../../lib/core/errors.ts';
import { walkJobChain } from '../../lib/ops/job-chain.ts';
import { defaultJobKey, jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { runCli } from '../factories/cli.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();

function worker(
  name: string,
  jobs: AnyJob[],
  queue: EmulatedQueue,
  dlq: EmulatedQueue,
  urls: Record<string, string>,
) {
  return createWorker({
    jobs,
    sqs: env.emulator.sqs,
    random: () => 0,
    logger: new Logger({ logLevel: 'SILENT' }),
    env: {
      JOBS_QUEUE_NAME: name,
      JOBS_QUEUE_URL: queue.url,
      JOBS_DLQ_URL: dlq.url,
      JOBS_IDEMPOTENCY_TABLE: env.tableName,
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...Object.fromEntries(
        Object.entries(urls).map(([q, url]) => [`JOBS_QUEUE_URL_${q.toUpperCase()}`, url]),
      ),
    },
  });
}

const schema = z.object({ orderId: z.string() });

describe('the chain in the idempotency records', () => {
  it('links parent and children, and sqs-jobs job prints the chain with a dead-lettered child and its cause', async () => {
    const orders = await env.emulator.createQueue('orders', false);
    const ordersDlq = await env.emulator.createQueue('orders-dlq', false);
    const mail = await env.emulator.createQueue('mail', false);
    const mailDlq = await env.emulator.createQueue('mail-dlq', false);
    const notify = defineJob({
      type: 'orders.notify',
      queue: 'mail',
      schema,
      run: async () => {
        throw new PermanentError('mailbox does not exist');
      },
    });
    const receipt = defineJob({ type: 'orders.receipt', queue: 'mail', schema, run: async () => 'sent' });
    const place = defineJob({
      type: 'orders.place',
      queue: 'orders',
      schema,
      run: async (data, ctx) => {
        ctx.enqueue(receipt, data);
        ctx.enqueue(notify, data);
        return { placed: data.orderId };
      },
    });
    const ordersWorker = worker('orders', [place], orders, ordersDlq, { mail: mail.url });
    const mailWorker = worker('mail', [notify, receipt], mail, mailDlq, {});
    await env.emulator.send(
      orders,
      createEnvelope({
        type: 'orders.place',
        source: '/shop',
        id: 'order-1',
        data: { orderId: 'o-1' },
        lineage: { correlationid: 'cart-9' },
      }),
    );
    expect((await env.emulator.deliver(orders, ordersWorker)).response.batchItemFailures).toEqual([]);
    const delivered = await env.emulator.deliver(mail, mailWorker);
    expect(delivered.delivered).toBe(2);

    const rootPk = jobRecordKey('orders.place', defaultJobKey('/shop', 'order-1'));
    const get = async (pk: string) =>
      (
        await env.db.client.send(
          new GetItemCommand({ TableName: env.tableName, Key: { pk: { S: pk } }, ConsistentRead: true }),
        )
      ).Item;
    const root = await get(rootPk);
    expect(root?.status?.S).toBe('COMPLETED');
    expect(root?.parentJob).toBeUndefined();
    const childPks = root?.childJobs?.SS ?? [];
    expect(childPks).toHaveLength(2);
    for (const pk of childPks) expect((await get(pk))?.parentJob?.S).toBe(rootPk);

    const chain = await walkJobChain({
      tables: [env.tableName],
      readItem: async (table, pk) =>
        (
          await env.db.client.send(
            new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }),
          )
        ).Item,
      start: { type: 'orders.place', key: defaultJobKey('/shop', 'order-1') },
    });
    expect(chain.jobs[0]).toMatchObject({ type: 'orders.place', depth: 0, state: 'done' });
    expect(
      chain.jobs
        .slice(1)
        .map((j) => [j.type, j.depth, j.state])
        .sort(),
    ).toEqual([
      ['orders.notify', 1, 'dead-lettered'],
      ['orders.receipt', 1, 'done'],
    ]);

    // The CLI from the dead-lettered child: up to its parent, down again, its cause from the DLQ.
    const notifyPk = childPks.find((pk) => pk.startsWith('orders.notify#')) as string;
    const notifyId = notifyPk.split('\n')[1] as string;
    const cli = await runCli(
      [
        'job',
        'orders.notify',
        '--source',
        '/sqs-jobs/orders',
        '--id',
        notifyId,
        '--idempotency-table',
        env.tableName,
        '--dynamodb-endpoint',
        env.db.endpoint,
        '--dlq-url',
        mailDlq.url,
        '--dlq-url',
        ordersDlq.url,
        '--endpoint',
        env.emulator.endpoint,
      ],
      env.emulator.endpoint,
    );
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('chain of orders.notify id');
    expect(cli.stdout).toContain('3 jobs (2 done, 1 DEAD-LETTERED)');
    expect(cli.stdout).toMatch(/^orders\.place {2}id order-1 \(source \/shop\)$/m);
    expect(cli.stdout).toMatch(/└─ orders\.notify .*← asked/);
    expect(cli.stdout).toMatch(
      /DEAD-LETTERED: in DLQ mail-dlq-\d+ since .*: PermanentError \(PermanentError: mailbox does not exist\)/,
    );
    // Read, never consumed: the dead letter is still there.
    const left = await env.emulator.receiveWithin(mailDlq, 2_000);
    expect(left.map((m) => JSON.parse(m.Body ?? '{}').id)).toEqual([notifyId]);
  });
});
