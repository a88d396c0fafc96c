/**
 * The local runtime on the fixture cloud assembly (test/fixtures/local/assembly): queues, DLQs
 * and tables created from the template on the embedded emulators, and the event source mapping
 * emulation driving the fixture bundles. The fixture functions report every record they see to
 * an observations queue, so the tests see each delivery (and redelivery) from the outside.
 *
 * No test races a clock: the fixture's visibility timeouts (60 s, 30 s) and function timeout
 * (10 s) are long enough for a loaded machine, and the fixtures prime the SDK in their init phase
 * (an environment's first request, several times the cost of later ones, stays out of the
 * Timeout: asset.echo/index.mjs); redeliveries are made to happen (the fixture's
 * `retrySoon`, {@link comeBackNow}) rather than waited for; and a test reads its observations only
 * once {@link settled} says every delivery is done and its observation collected.
 */
import { fileURLToPath } from 'node:url';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationReport } from '../../lib/local/event-source-mapping.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';

const ASSEMBLY = fileURLToPath(new URL('../fixtures/local/assembly', import.meta.url));

/** What a fixture function reports for each record it handles. */
interface Observation {
  readonly fn: string;
  readonly value: string;
  readonly leak: string | null;
  readonly id: string;
  readonly receiveCount: number;
  readonly batchSize?: number;
  readonly group?: string;
  readonly remainingMs: number;
  readonly awsRequestId?: string;
  readonly record: SQSRecord;
}

let rt: LocalRuntime;
const observations: Observation[] = [];
const reports: InvocationReport[] = [];
const collector = new AbortController();
let collecting: Promise<void> | undefined;
let counter = 0;
const uid = (label: string) => `${label}-${++counter}-${Date.now().toString(36)}`;

async function collect(): Promise<void> {
  const url = rt.queue('ObservationsE1E2E3E4').url;
  while (!collector.signal.aborted) {
    try {
      const out = await rt.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        { abortSignal: collector.signal },
      );
      const messages = out.Messages ?? [];
      for (const m of messages) observations.push(JSON.parse(m.Body ?? '{}') as Observation);
      // Deleted once recorded: an empty observations queue means every observation sent is in
      // `observations` (settled() waits for that), and none comes back after its visibility timeout.
      if (messages.length > 0) {
        await rt.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: url,
            Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    } catch {
      // aborted at the end of the file
    }
  }
}

const of = (id: string) => observations.filter((o) => o.id === id);

async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Waits until every delivery is settled (the fixture's queues empty, no batch in progress) and
 * every observation the functions sent is collected (the observations queue empty too).
 */
async function settled(): Promise<void> {
  // A bound, not a wait: at load 30 on 2 cores a retry on a fresh environment took over 30 s.
  await rt.waitUntilDrained({ queues: ['work', 'ordered', 'ObservationsE1E2E3E4'], timeoutMs: 90_000 });
}

/**
 * Once the runtime has settled the invocation that first delivered `id` with `outcome`, makes
 * that delivery's record visible again at once: what the queue's 60 s visibility timeout would do
 * later. Only a record the runtime left on the queue can come back (a deleted one cannot).
 */
async function comeBackNow(id: string, outcome: InvocationReport['outcome']): Promise<void> {
  const first = await until(() => of(id).find((o) => o.receiveCount === 1), `the first delivery of ${id}`);
  await until(
    () => reports.find((r) => r.awsRequestId === first.awsRequestId && r.outcome === outcome),
    `the ${outcome} invocation of ${id}`,
    30_000,
  );
  await rt.sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: rt.queue('work').url,
      ReceiptHandle: first.record.receiptHandle,
      VisibilityTimeout: 0,
    }),
  );
}

/** Sends jobs to the fixture's standard queue in one SendMessageBatch (so they are received together). */
async function sendWork(...bodies: Record<string, unknown>[]): Promise<void> {
  const out = await rt.sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: rt.queue('work').url,
      Entries: bodies.map((b, i) => ({ Id: String(i), MessageBody: JSON.stringify(b) })),
    }),
  );
  expect(out.Failed ?? []).toEqual([]);
}

beforeAll(async () => {
  process.env.SQS_JOBS_LEAK_CHECK = 'visible-to-the-host-only';
  rt = await startLocalRuntime({
    assemblyDir: ASSEMBLY,
    synthesize: 'never',
    env: {},
    receiveWaitTimeSeconds: 2,
    // Execution environments initialised before polling, as in the other tests of the runtime.
    prewarm: true,
    onInvocation: (r) => reports.push(r),
  });
  collecting = collect();
});

afterAll(async () => {
  delete process.env.SQS_JOBS_LEAK_CHECK;
  collector.abort();
  await collecting;
  await rt?.stop();
});

describe('provisioning from the synthesized template', () => {
  it('creates queues with their attributes and redrive policies, tables, and resolves outputs', async () => {
    const work = rt.queue('work');
    const dlq = rt.queue('WorkDlq9C8B7A6D');
    expect(work.deadLetterQueue).toMatchObject({ url: dlq.url, arn: dlq.arn, maxReceiveCount: 2 });
    expect(dlq.isDeadLetterQueue).toBe(true);
    const attrs = (
      await rt.sqs.send(new GetQueueAttributesCommand({ QueueUrl: work.url, AttributeNames: ['All'] }))
    ).Attributes;
    expect(attrs).toMatchObject({
      VisibilityTimeout: '60',
      MessageRetentionPeriod: '3600',
      MaximumMessageSize: '1048576',
    });
    expect(JSON.parse(attrs?.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: dlq.arn,
      maxReceiveCount: 2,
    });

    const ordered = rt.queue('ordered');
    expect(ordered).toMatchObject({ name: 'FixtureStack-ordered.fifo', fifo: true });
    const orderedAttrs = (
      await rt.sqs.send(new GetQueueAttributesCommand({ QueueUrl: ordered.url, AttributeNames: ['All'] }))
    ).Attributes;
    expect(orderedAttrs).toMatchObject({
      FifoQueue: 'true',
      ContentBasedDeduplication: 'true',
      VisibilityTimeout: '30',
    });
    expect(rt.queue('OrderedDlq4E5F6A7B').name).toMatch(/\.fifo$/);
    expect(rt.queues.map((q) => q.logicalId)).not.toContain('ProdOnlyQueueDEADBEEF');

    const state = await rt.dynamodb.send(
      new DescribeTableCommand({ TableName: 'FixtureStack-StateTableA1B2C3D4' }),
    );
    expect(state.Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    const domain = rt.tables.find((t) => t.logicalId === 'DomainTableF0E1D2C3');
    expect(domain?.keySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(rt.outputs).toMatchObject({
      WorkQueueUrl: work.url,
      StateTableName: 'FixtureStack-StateTableA1B2C3D4',
      AlarmTopicArn: `arn:aws:sns:us-east-1:${rt.accountId}:FixtureStack-AlarmTopic99887766`,
    });
    expect(rt.outputs).not.toHaveProperty('ProdOnly');
    expect(rt.skippedResources).toContain('WorkDlqDepthAlarmCAFEBABE (AWS::CloudWatch::Alarm)');
  });

  it('gives each function its template environment, resolved, with the endpoints of the emulators', () => {
    const env = rt.worker('work').env;
    expect(env).toMatchObject({
      JOBS_QUEUE_URL: rt.queue('work').url,
      JOBS_DLQ_URL: rt.queue('WorkDlq9C8B7A6D').url,
      JOBS_IDEMPOTENCY_TABLE: 'FixtureStack-StateTableA1B2C3D4',
      QUEUE_ARN_VIA_SUB: rt.queue('work').arn,
      DLQ_NAME_VIA_SELECT: rt.queue('WorkDlq9C8B7A6D').name,
      STAGE_LABEL: 'local-stage',
      AWS_ENDPOINT_URL_SQS: rt.endpoints.sqs,
      AWS_ENDPOINT_URL_DYNAMODB: rt.endpoints.dynamodb,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    });
    expect(env).not.toHaveProperty('PROD_ONLY');
    expect(env).not.toHaveProperty('SQS_JOBS_LEAK_CHECK');
    expect(rt.worker('work')).toMatchObject({ batchSize: 5, concurrency: 2, reportBatchItemFailures: true });
    expect(rt.worker('ordered')).toMatchObject({ batchSize: 10, concurrency: 5, timeoutSeconds: 5 });
  });
});

// Bounds for a loaded machine (settled() may take 90 s there); the tests end as soon as they can.
describe('event source mapping emulation', { timeout: 180_000 }, () => {
  it('deletes the records of a successful batch', async () => {
    const before = rt.stats().functions.EchoFunctionAABBCCDD?.recordsDeleted ?? 0;
    const ids = [uid('ok'), uid('ok'), uid('ok')];
    await sendWork(...ids.map((id) => ({ id, action: 'ok' })));
    await settled();
    for (const id of ids) expect(of(id).map((o) => o.receiveCount)).toEqual([1]);
    expect((rt.stats().functions.EchoFunctionAABBCCDD?.recordsDeleted ?? 0) - before).toBe(3);
  });

  it('leaves the records named in batchItemFailures on the queue and deletes the others', async () => {
    const [a, failing, b] = [uid('ok'), uid('failOnce'), uid('ok')];
    await sendWork({ id: a, action: 'ok' }, { id: failing, action: 'failOnce' }, { id: b, action: 'ok' });
    await settled();
    expect(of(failing).map((o) => o.receiveCount)).toEqual([1, 2]);
    expect(of(a).map((o) => o.receiveCount)).toEqual([1]);
    expect(of(b).map((o) => o.receiveCount)).toEqual([1]);
  });

  it('fails the whole batch when the function throws, and every record of it comes back', async () => {
    const [ok, throwing] = [uid('ok'), uid('throwOnce')];
    await sendWork({ id: ok, action: 'ok' }, { id: throwing, action: 'throwOnce' });
    await settled();
    const first = of(throwing).find((o) => o.receiveCount === 1);
    expect(of(throwing).map((o) => o.receiveCount)).toEqual([1, 2]);
    const report = reports.find((r) => r.awsRequestId === first?.awsRequestId);
    expect(report).toMatchObject({
      outcome: 'error',
      error: { errorMessage: `fixture throws for ${throwing}` },
    });
    // Both were sent in one SendMessageBatch and received in one batch: the good one fails with it.
    expect(report?.messageIds).toHaveLength(2);
    // Every record of the failed invocation was left on the queue and delivered again.
    for (const messageId of report?.messageIds ?? []) {
      const seen = observations.filter((o) => o.record.messageId === messageId);
      expect(seen.map((o) => o.receiveCount)).toEqual([1, 2]);
    }
    expect(report?.failedMessageIds).toEqual(report?.messageIds);
  });

  it('fails the whole batch when the response names a record that is not in it', async () => {
    const id = uid('malformedOnce');
    const before = rt.stats().totals.malformedResponses;
    await sendWork({ id, action: 'malformedOnce' });
    await settled();
    expect(of(id).map((o) => o.receiveCount)).toEqual([1, 2]);
    expect(rt.stats().totals.malformedResponses - before).toBe(1);
  });

  it('treats an invocation past the function timeout as a failure of the whole batch', async () => {
    const id = uid('sleepOnce');
    const before = rt.stats().functions.EchoFunctionAABBCCDD?.timeouts ?? 0;
    await sendWork({ id, action: 'sleepOnce', ms: 12_000 });
    await comeBackNow(id, 'timeout');
    await settled();
    const seen = of(id);
    expect(seen.map((o) => o.receiveCount)).toEqual([1, 2]);
    expect(seen[0]?.remainingMs).toBeLessThanOrEqual(10_000);
    const timedOut = reports.find((r) => r.awsRequestId === seen[0]?.awsRequestId);
    expect(timedOut?.outcome).toBe('timeout');
    const retry = reports.find((r) => r.awsRequestId === seen[1]?.awsRequestId);
    expect(retry?.outcome).toBe('success');
    expect((rt.stats().functions.EchoFunctionAABBCCDD?.timeouts ?? 0) - before).toBe(1);
  });

  it('redelivers a batch whose response was lost after the function ran', async () => {
    const id = uid('lost');
    const before = rt.stats().functions.EchoFunctionAABBCCDD?.lostResponses ?? 0;
    rt.loseNextResponses('work', 1);
    await sendWork({ id, action: 'ok' });
    await comeBackNow(id, 'lost');
    await settled();
    // The side effect (the observation) happened twice: the first run was not acknowledged.
    expect(of(id).map((o) => o.receiveCount)).toEqual([1, 2]);
    expect((rt.stats().functions.EchoFunctionAABBCCDD?.lostResponses ?? 0) - before).toBe(1);
  });

  it('runs each function isolated, with its own environment', async () => {
    const [w, o] = [uid('env'), uid('env')];
    await sendWork({ id: w, action: 'ok' });
    await rt.sqs.send(
      new SendMessageCommand({
        QueueUrl: rt.queue('ordered').url,
        MessageBody: JSON.stringify({ id: o }),
        MessageGroupId: 'g',
      }),
    );
    await settled();
    const [echo, ordered] = [of(w)[0], of(o)[0]];
    expect(echo).toMatchObject({ fn: 'FixtureStack-EchoFunctionAABBCCDD', value: 'echo', leak: null });
    expect(ordered).toMatchObject({
      fn: 'FixtureStack-OrderedFunction01020304',
      value: 'ordered',
      leak: null,
    });
    expect(ordered?.remainingMs).toBeGreaterThan(4_000);
    expect(ordered?.remainingMs).toBeLessThanOrEqual(5_000);
  });

  it('delivers records shaped like Lambda records, in order within each FIFO message group', async () => {
    const attributes: Record<string, MessageAttributeValue> = {
      Kind: { DataType: 'String', StringValue: 'booking' },
      Count: { DataType: 'Number', StringValue: '3' },
      Blob: { DataType: 'Binary', BinaryValue: Buffer.from('hi') },
    };
    const groups = ['user-a', 'user-b'];
    const ids: Record<string, string[]> = { 'user-a': [], 'user-b': [] };
    for (let i = 0; i < 4; i++) {
      for (const group of groups) {
        const id = uid(group);
        ids[group]?.push(id);
        await rt.sqs.send(
          new SendMessageCommand({
            QueueUrl: rt.queue('ordered').url,
            MessageBody: JSON.stringify({ id }),
            MessageGroupId: group,
            MessageAttributes: attributes,
          }),
        );
      }
    }
    await settled();
    for (const group of groups) {
      const seen = observations
        .filter((o) => o.group === group && ids[group]?.includes(o.id))
        .map((o) => o.id);
      expect(seen).toEqual(ids[group]);
    }
    const record = of(ids['user-a']?.[0] ?? '')[0]?.record;
    expect(record).toMatchObject({
      eventSource: 'aws:sqs',
      eventSourceARN: rt.queue('ordered').arn,
      awsRegion: rt.region,
      attributes: { ApproximateReceiveCount: '1', MessageGroupId: 'user-a' },
      messageAttributes: {
        Kind: { stringValue: 'booking', dataType: 'String', stringListValues: [], binaryListValues: [] },
        Count: { stringValue: '3', dataType: 'Number' },
        Blob: { binaryValue: Buffer.from('hi').toString('base64'), dataType: 'Binary' },
      },
    });
    expect(Object.keys(record?.attributes ?? {})).toEqual(
      expect.arrayContaining([
        'SentTimestamp',
        'SequenceNumber',
        'MessageDeduplicationId',
        'ApproximateFirstReceiveTimestamp',
      ]),
    );
    expect(record?.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
    expect(record?.md5OfMessageAttributes).toMatch(/^[0-9a-f]{32}$/);
  });

  it('shows queue age and DLQ depth, as the alarms watch them, during a run', async () => {
    const dlq = rt.queue('work').deadLetterQueue?.url ?? '';
    expect(await rt.queueDepth(dlq)).toMatchObject({ visible: 0, oldestMessageAgeMs: 0 });
    const [held, poison] = [uid('held'), uid('throw')];
    const sentAfterMs = Date.now();
    // Its answer lost, the message stays in flight (until the queue's 60 s visibility timeout):
    // a state the probe below sees however slow the machine, not a window it has to catch.
    rt.loseNextResponses('work', 1);
    await sendWork({ id: held, action: 'ok' });
    const inFlight = await until(
      async () => {
        const d = await rt.queueDepth('work');
        return d.notVisible > 0 && (d.oldestMessageAgeMs ?? 0) > 0 ? d : undefined;
      },
      'the held message in flight',
      30_000,
    );
    // The age is the held message's, counted from its send (not an older message's).
    expect(inFlight.oldestMessageAgeMs).toBeLessThanOrEqual(Date.now() - sentAfterMs);
    await sendWork({ id: poison, action: 'throw' });
    const depth = await until(
      async () => {
        const d = await rt.queueDepth(dlq);
        return d.visible === 1 ? d : undefined;
      },
      'the poison message in the DLQ',
      30_000,
    );
    expect(depth.oldestMessageAgeMs).toBeGreaterThanOrEqual(0);
    await comeBackNow(held, 'lost');
    await settled();
    expect(of(poison).map((o) => o.receiveCount)).toEqual([1, 2]);
    expect(of(held).map((o) => o.receiveCount)).toEqual([1, 2]);
  });
});

/** Sockets, servers, threads and message ports of this process. */
const count = () =>
  process
    .getActiveResourcesInfo()
    .filter((r) => r === 'TCPSocketWrap' || r === 'TCPServerWrap' || r === 'Worker' || r === 'MessagePort')
    .length;
/** Before the file's runtime started. */
const handlesAtLoad = count();

describe('stop', () => {
  it('stops pollers, execution environments and emulators without leaving handles', async () => {
    // The file's own runtime and collector are stopped first: their connections open and close
    // as they work, so a count taken beside them is no baseline (afterAll's stop is then a no-op).
    // The baseline is taken once their handles are all gone (closing sockets outlive stop() by a
    // few turns of the event loop: a count taken at once was above the next runtime's).
    collector.abort();
    await collecting;
    await rt.stop();
    await until(() => count() <= handlesAtLoad, "the file's runtime's handles to close");
    const baseline = count();
    const other = await startLocalRuntime({ assemblyDir: ASSEMBLY, synthesize: 'never', env: {} });
    await other.sqs.send(
      new SendMessageCommand({
        QueueUrl: other.queue('work').url,
        MessageBody: JSON.stringify({ id: 'x', action: 'ok' }),
      }),
    );
    // Without prewarm: the first invocation waits for an init phase, slow on a loaded machine.
    await other.waitUntilDrained({ timeoutMs: 30_000 });
    expect(count()).toBeGreaterThan(baseline);
    await other.stop();
    await other.stop();
    await until(() => count() <= baseline, 'handles to close');
  });
});
