/**
 * The workload of `npm start`: seeds the sample domain, sends bookings, payments and a few
 * deliberately bad messages through {@link JobClient}, waits until every job has reached a final
 * state (completed or dead-lettered) or a deadline passes, then collects the facts the report is
 * computed from (lib/local/report.ts).
 *
 * How a job's final state is known, without trusting the system under test:
 * - completed: the job's own evidence in the domain table (a booking step in the user's order
 *   log, `paymentId` / `emailId` on the booking), written by the job itself;
 * - dead-lettered: the message is in its queue's DLQ (matched by `SourceMessageId` or by the
 *   body's job type and booking id);
 * - lost: neither, once every queue is empty (nothing visible, in flight or delayed).
 * Children exist only when their parent completed (`ctx.enqueue` sends on success only), so
 * the set of jobs that must reach a final state follows from the parents' evidence.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { type BatchEntry, batchEntry, JobClient } from '../client/job-client.ts';
import { createEnvelope } from '../runtime/envelope.ts';
import { type Booking, DomainRepository, type DomainSnapshot } from '../sample/domain.ts';
import { CONFIRMATION_TEMPLATE, sampleJobs } from '../sample/jobs.ts';
import { SAMPLE_QUEUES } from '../sample/topology.ts';
import {
  type ExternalService,
  type ExternalServiceOptions,
  type ExternalServiceStats,
  FAILING_FAULT_KINDS,
  type FaultKind,
  type FaultRates,
  seededUniform,
  startExternalService,
} from './external-service.ts';
import {
  buildReport,
  type DeadLetterFact,
  type JobOutcome,
  type ReportFacts,
  type RunReport,
} from './report.ts';
import { type LocalRuntime, RUNTIME_ENV, type RuntimeStats, startLocalRuntime } from './runtime.ts';

/** Envelope `source` of the jobs the workload sends. */
export const WORKLOAD_SOURCE = '/sqs-jobs/workload';
/** SKU with no stock: bookings of it are the deliberate out-of-stock failures. */
export const SOLD_OUT_SKU = 'sku-sold-out';

/** Size and shape of a workload. */
export interface WorkloadOptions {
  /** Users, each a FIFO message group. Integer >= 1. @default 100 */
  readonly users?: number;
  /** Bookings per user, sent in order. Integer >= 1. @default 3 */
  readonly bookingsPerUser?: number;
  /** Seed of every random choice (SKUs, quantities, which bookings are sold out). @default 1 */
  readonly seed?: number;
  /** Bookings of a sold-out SKU (dead-lettered as out of stock, never retried). @default 2 */
  readonly outOfStock?: number;
  /** Malformed messages (bad JSON, schema failure, unknown type), one per queue in turn. @default 3 */
  readonly malformed?: number;
  /**
   * Payment jobs sent a second time with the same envelope id after everything else (delayed by
   * {@link RESEND_DELAY_SECONDS}), as a producer that retries a send would: the idempotency store
   * must absorb them. @default 0
   */
  readonly producerDuplicates?: number;
}

/** A workload with every default filled in. */
export type ResolvedWorkloadOptions = Required<WorkloadOptions>;

/** Fills defaults and checks the options. @throws {RangeError} naming every bad option. */
export function resolveWorkloadOptions(options: WorkloadOptions = {}): ResolvedWorkloadOptions {
  const resolved = {
    users: 100,
    bookingsPerUser: 3,
    seed: 1,
    outOfStock: 2,
    malformed: 3,
    producerDuplicates: 0,
    ...options,
  };
  const problems: string[] = [];
  const int = (name: keyof ResolvedWorkloadOptions, min: number) => {
    const value = resolved[name];
    if (!Number.isInteger(value) || value < min)
      problems.push(`${name} must be an integer >= ${min}, got ${value}`);
  };
  int('users', 1);
  int('bookingsPerUser', 1);
  int('seed', 0);
  int('outOfStock', 0);
  int('malformed', 0);
  int('producerDuplicates', 0);
  if (problems.length === 0 && resolved.outOfStock > resolved.users * resolved.bookingsPerUser) {
    problems.push(`outOfStock (${resolved.outOfStock}) exceeds the number of bookings`);
  }
  if (problems.length > 0) throw new RangeError(`invalid workload: ${problems.join('; ')}`);
  return resolved;
}

/** A malformed message the workload sends on purpose. */
export interface BadMessagePlan {
  readonly key: string;
  /** Logical queue it goes to. */
  readonly queue: string;
  readonly kind: 'bad JSON' | 'schema failure' | 'unknown job type';
  /** FIFO `MessageGroupId`, for the FIFO queue. */
  readonly groupId?: string;
}

/**
 * The body of a malformed message: JSON cut short, an envelope whose data fails the job's
 * schema, or an envelope of a job type no worker knows.
 */
export function badMessageBody(bad: BadMessagePlan, time: Date = new Date()): string {
  if (bad.kind === 'bad JSON') return `{"specversion":"1.0","id":"${bad.key}",`;
  const envelope =
    bad.kind === 'schema failure'
      ? createEnvelope({
          type: sampleJobs.sendEmail.type,
          source: WORKLOAD_SOURCE,
          id: bad.key,
          time,
          data: { userId: 'u-1' },
        })
      : createEnvelope({
          type: 'booking.cancel-everything',
          source: WORKLOAD_SOURCE,
          id: bad.key,
          time,
          data: { userId: 'nobody' },
          ...(bad.groupId ? { partitionKey: bad.groupId } : {}),
        });
  return JSON.stringify(envelope);
}

/** Everything the workload will create and send; pure data from the options. */
export interface WorkloadPlan {
  readonly options: ResolvedWorkloadOptions;
  readonly stocks: readonly { readonly sku: string; readonly stock: number }[];
  readonly users: readonly { readonly userId: string; readonly email: string; readonly name: string }[];
  /** All bookings, ordered by ordinal then user (the send order). */
  readonly bookings: readonly Booking[];
  /** Booking ids of the deliberate out-of-stock bookings (no payment is sent for them). */
  readonly soldOut: ReadonlySet<string>;
  /** Booking ids whose payment job is sent twice (same id). */
  readonly resend: readonly string[];
  readonly badMessages: readonly BadMessagePlan[];
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Plans a workload: same options, same plan. */
export function planWorkload(options: WorkloadOptions = {}): WorkloadPlan {
  const o = resolveWorkloadOptions(options);
  const width = String(o.users).length;
  const total = o.users * o.bookingsPerUser;
  const regularSkus = Array.from({ length: 10 }, (_, i) => `sku-${pad(i + 1, 2)}`);
  // Enough stock that only the sold-out SKU ever runs out (at most 3 units per booking).
  const stocks = [...regularSkus.map((sku) => ({ sku, stock: total * 3 })), { sku: SOLD_OUT_SKU, stock: 0 }];
  const users = Array.from({ length: o.users }, (_, i) => {
    const userId = `u-${pad(i + 1, width)}`;
    return { userId, email: `${userId}@example.com`, name: `User ${i + 1}` };
  });
  // Pick the sold-out bookings by a seeded shuffle of all booking positions.
  const positions = Array.from({ length: total }, (_, i) => i)
    .map((i) => ({ i, r: seededUniform(o.seed, 'sold-out', i) }))
    .sort((a, b) => a.r - b.r)
    .slice(0, o.outOfStock)
    .map((p) => p.i);
  const soldOutPositions = new Set(positions);
  const bookings: Booking[] = [];
  const soldOut = new Set<string>();
  for (let ordinal = 1; ordinal <= o.bookingsPerUser; ordinal++) {
    users.forEach(({ userId }, u) => {
      const position = u * o.bookingsPerUser + (ordinal - 1);
      const bookingId = `b-${userId.slice(2)}-${ordinal}`;
      const sku = soldOutPositions.has(position)
        ? SOLD_OUT_SKU
        : (regularSkus[Math.floor(seededUniform(o.seed, 'sku', bookingId) * regularSkus.length)] ?? 'sku-01');
      if (sku === SOLD_OUT_SKU) soldOut.add(bookingId);
      const quantity = 1 + Math.floor(seededUniform(o.seed, 'quantity', bookingId) * 3);
      bookings.push({
        bookingId,
        userId,
        sku,
        quantity,
        amountCents: quantity * (500 + Math.floor(seededUniform(o.seed, 'price', bookingId) * 9_500)),
        ordinal,
        status: 'PENDING',
      });
    });
  }
  const kinds: BadMessagePlan['kind'][] = ['bad JSON', 'schema failure', 'unknown job type'];
  const queues: Record<BadMessagePlan['kind'], string> = {
    'bad JSON': 'payments',
    'schema failure': 'notifications',
    'unknown job type': 'booking',
  };
  const badMessages = Array.from({ length: o.malformed }, (_, i): BadMessagePlan => {
    const kind = kinds[i % kinds.length] ?? 'bad JSON';
    const plan = { key: `bad:${i + 1}`, kind, queue: queues[kind] };
    return kind === 'unknown job type' ? { ...plan, groupId: `bad-${i + 1}` } : plan;
  });
  const resend = bookings
    .filter((b) => !soldOut.has(b.bookingId))
    .map((b) => ({ id: b.bookingId, r: seededUniform(o.seed, 'resend', b.bookingId) }))
    .sort((a, b) => a.r - b.r)
    .slice(0, o.producerDuplicates)
    .map((x) => x.id);
  return { options: o, stocks, users, bookings, soldOut, resend, badMessages };
}

/** Where the workload runs: queue URLs, the domain table and clients pointed at the emulators. */
export interface WorkloadTarget {
  /** Logical queue name → URL (`booking`, `payments`, `notifications`). */
  readonly queueUrls: Readonly<Record<string, string>>;
  /** Logical queue name → URL of its dead-letter queue. */
  readonly dlqUrls: Readonly<Record<string, string>>;
  /** Name of the sample app's domain table (`APP_TABLE`). */
  readonly appTableName: string;
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
}

/** What was sent, when: the ledger reconciled against the evidence. */
export interface SentLedger {
  /** Job key → send time, epoch ms. */
  readonly sentAtMs: ReadonlyMap<string, number>;
  /** SQS message id → job key of the malformed messages. */
  readonly badMessageIds: ReadonlyMap<string, string>;
  /** Jobs sent a second time with the same id. */
  readonly resent: number;
}

/**
 * Delay of a producer resend, in seconds: a producer retries a send a little later. (One that
 * arrives while the original still runs is told "busy" and comes back when the original's lease
 * ends, about the job time limit later: correct, but a long wait at the end of a run.)
 */
export const RESEND_DELAY_SECONDS = 5;

/** A job key: `<type>:<bookingId>`. */
export const jobKey = (type: string, bookingId: string): string => `${type}:${bookingId}`;

/** Seeds the domain table with the plan's stocks, users and bookings. */
export async function seedDomain(
  repository: DomainRepository,
  plan: WorkloadPlan,
  concurrency = 16,
): Promise<void> {
  const limit = pLimit(concurrency);
  await Promise.all([
    ...plan.stocks.map((s) => limit(() => repository.putStock(s.sku, s.stock))),
    ...plan.users.map((u) => limit(() => repository.putUser(u))),
    ...plan.bookings.map((b) => limit(() => repository.putBooking(b))),
  ]);
}

/**
 * Sends the plan: round by round (the k-th booking of every user, then the next), so each user's
 * bookings enter their FIFO group in order; payments go with their bookings; then the malformed
 * messages, raw, because JobClient refuses to send them.
 * @throws when a send fails for good (JobClient reports failed entries).
 */
export async function sendWorkload(
  client: JobClient,
  target: WorkloadTarget,
  plan: WorkloadPlan,
  onSent: (count: number) => void = () => {},
): Promise<SentLedger> {
  const sentAtMs = new Map<string, number>();
  const badMessageIds = new Map<string, string>();
  const { reserveInventory, capturePayment } = sampleJobs;
  for (let ordinal = 1; ordinal <= plan.options.bookingsPerUser; ordinal++) {
    const round = plan.bookings.filter((b) => b.ordinal === ordinal);
    const entries = round.flatMap((b): BatchEntry[] => {
      const data = { userId: b.userId, bookingId: b.bookingId };
      const reserve = batchEntry(reserveInventory, data, {
        partitionKey: b.userId,
        id: `reserve-${b.bookingId}`,
      });
      if (plan.soldOut.has(b.bookingId)) return [reserve];
      return [reserve, batchEntry(capturePayment, data, { id: `capture-${b.bookingId}` })];
    });
    const at = Date.now();
    const result = await client.sendBatch(entries);
    if (result.failed.length > 0) {
      throw new Error(
        `could not send ${result.failed.length} jobs: ${JSON.stringify(result.failed.slice(0, 3))}`,
      );
    }
    for (const entry of entries) {
      sentAtMs.set(jobKey(entry.job.type, (entry.data as { bookingId: string }).bookingId), at);
    }
    onSent(entries.length);
  }
  const bookingsById = new Map(plan.bookings.map((b) => [b.bookingId, b]));
  const resend = plan.resend.flatMap((id) => {
    const b = bookingsById.get(id);
    return b
      ? [
          batchEntry(
            capturePayment,
            { userId: b.userId, bookingId: b.bookingId },
            { id: `capture-${id}`, delaySeconds: RESEND_DELAY_SECONDS },
          ),
        ]
      : [];
  });
  if (resend.length > 0) {
    const result = await client.sendBatch(resend);
    if (result.failed.length > 0) throw new Error(`could not resend ${result.failed.length} jobs`);
    onSent(resend.length);
  }
  for (const bad of plan.badMessages) {
    const url = target.queueUrls[bad.queue];
    if (!url) throw new Error(`no URL for queue ${bad.queue}`);
    const at = Date.now();
    const out = await target.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: badMessageBody(bad),
        ...(bad.groupId ? { MessageGroupId: bad.groupId, MessageDeduplicationId: `${bad.key}-${at}` } : {}),
      }),
    );
    if (out.MessageId) badMessageIds.set(out.MessageId, bad.key);
    sentAtMs.set(bad.key, at);
    onSent(1);
  }
  return { sentAtMs, badMessageIds, resent: resend.length };
}

/** Messages of a queue by state (SQS `ApproximateNumberOfMessages*` attributes). */
export interface QueueActivity {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** Reads the message counts of a queue. */
export async function queueActivity(sqs: SQSClient, queueUrl: string): Promise<QueueActivity> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** A message read from a DLQ, reduced to what the report needs. */
export interface CollectedDeadLetter {
  /** Logical name of the source queue. */
  readonly queue: string;
  readonly messageId: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
}

function attributeValues(
  attributes: Record<string, MessageAttributeValue> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value.StringValue !== undefined) out[name] = value.StringValue;
  }
  return out;
}

/**
 * Reads every message of the DLQs, for the report at the end of a run.
 *
 * A standard DLQ is read without deleting anything (a long visibility timeout keeps a message
 * from being read twice). A FIFO DLQ returns nothing more of a message group while one of its
 * messages is in flight ("FIFO queue logic", SQS developer guide), so the only way to read it to
 * the end is to take each message off after reading it: `takeFifo` (default true) does that;
 * the run is over and the report keeps the evidence. Stops at `expected` messages per queue
 * when given, or after three empty receives.
 */
export async function collectDeadLetters(
  sqs: SQSClient,
  dlqUrls: Readonly<Record<string, string>>,
  expected: Readonly<Record<string, number>> = {},
  takeFifo = true,
): Promise<CollectedDeadLetter[]> {
  const collected: CollectedDeadLetter[] = [];
  for (const [queue, url] of Object.entries(dlqUrls)) {
    const take = takeFifo && url.endsWith('.fifo');
    const seen = new Set<string>();
    let empty = 0;
    while (empty < 3 && (expected[queue] === undefined || seen.size < (expected[queue] ?? 0))) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 300,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const messages = out.Messages ?? [];
      if (messages.length === 0) empty += 1;
      for (const m of messages) {
        if (!m.MessageId || seen.has(m.MessageId)) continue;
        seen.add(m.MessageId);
        collected.push({
          queue,
          messageId: m.MessageId,
          body: m.Body ?? '',
          attributes: attributeValues(m.MessageAttributes),
        });
      }
      if (take) {
        const handles = messages.flatMap((m, i) =>
          m.ReceiptHandle ? [{ Id: String(i), ReceiptHandle: m.ReceiptHandle }] : [],
        );
        if (handles.length > 0)
          await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: handles }));
      }
    }
  }
  return collected;
}

/** Transient reasons that an injected fault produces (retries used up on injected faults only). */
const INJECTED_TRANSIENT_REASONS = new Set(['HTTP 429', 'HTTP 503', 'TimeoutError', 'AbortError']);

/** What {@link reconcile} produces. */
export interface Reconciliation {
  readonly jobs: JobOutcome[];
  readonly deadLetters: DeadLetterFact[];
  readonly completed: number;
  readonly deadLettered: number;
  /** Jobs known to exist and not final yet (lost when the queues drained, unfinished at the deadline). */
  readonly pending: number;
  /** Jobs expected by the end, counting the children of jobs not yet final. */
  readonly projectedTotal: number;
}

/**
 * Joins the plan, the sent ledger, the domain evidence and the dead letters into one outcome per
 * job. Pure. With `final`, jobs still pending are `lost` (the queues drained) or, with
 * `timedOut`, `unfinished` (the deadline passed first); without `final`, they are left out of
 * `jobs` and counted in `pending`.
 */
export function reconcile(input: {
  readonly plan: WorkloadPlan;
  readonly ledger: SentLedger;
  readonly snapshot: DomainSnapshot;
  readonly deadLetters: readonly CollectedDeadLetter[];
  /** The fake service's injected faults per reference. */
  readonly faultsByReference: Readonly<Record<string, readonly FaultKind[]>>;
  readonly final: boolean;
  /** The deadline passed before the queues drained: pending jobs are `unfinished`, not `lost`. */
  readonly timedOut?: boolean;
}): Reconciliation {
  const { plan, ledger, snapshot, faultsByReference, final } = input;
  const pendingState = input.timedOut === true ? 'unfinished' : 'lost';
  const maxAttempts = Object.fromEntries(SAMPLE_QUEUES.map((q) => [q.name, q.maxAttempts])) as Record<
    string,
    number
  >;

  // Dead letters, matched to job keys.
  // A key can have several (a producer resend of a job that was dead-lettered runs and fails again).
  const deadLettersByKey = new Map<string, CollectedDeadLetter[]>();
  const unmatched: CollectedDeadLetter[] = [];
  for (const dl of input.deadLetters) {
    const key = matchDeadLetter(dl, ledger);
    if (key) deadLettersByKey.set(key, [...(deadLettersByKey.get(key) ?? []), dl]);
    else unmatched.push(dl);
  }
  const known = new Set<string>();

  const jobs: JobOutcome[] = [];
  const deadLetters: DeadLetterFact[] = [];
  let pending = 0;
  let projectedTotal = 0;
  const logs = new Map(snapshot.orderLogs.map((log) => [log.userId, log]));
  const bookings = new Map(snapshot.bookings.map((b) => [b.bookingId, b]));

  const account = (
    job: Omit<JobOutcome, 'state'>,
    evidence: { atMs: number; attempt: number } | undefined,
    expectedFailure: (dl: CollectedDeadLetter) => string | undefined,
  ): 'completed' | 'dead-lettered' | 'pending' => {
    projectedTotal += 1;
    known.add(job.key);
    const dls = deadLettersByKey.get(job.key) ?? [];
    const dl = dls[0];
    if (dl) {
      const attempts = Number(dl.attributes.Attempts);
      jobs.push({ ...job, state: 'dead-lettered', ...(Number.isFinite(attempts) ? { attempts } : {}) });
      for (const each of dls) deadLetters.push(toFact(each, job.key, expectedFailure(each)));
      return 'dead-lettered';
    }
    if (evidence) {
      jobs.push({ ...job, state: 'completed', completedAtMs: evidence.atMs, attempts: evidence.attempt });
      return 'completed';
    }
    pending += 1;
    if (final) jobs.push({ ...job, state: pendingState });
    return 'pending';
  };

  const injectedFailures = (reference: string | undefined): FaultKind[] =>
    reference === undefined
      ? []
      : (faultsByReference[reference] ?? []).filter((k) =>
          (FAILING_FAULT_KINDS as readonly string[]).includes(k),
        );
  const externalFailure = (queue: string, reference: string | undefined) => (dl: CollectedDeadLetter) => {
    const reason = dl.attributes.ErrorReason;
    const injected = injectedFailures(reference);
    if (reason === 'HTTP 400' && injected.includes('badRequest')) return 'injected 400';
    const attempts = Number(dl.attributes.Attempts);
    // The worker writes `attempts-used-up: <reason>` when the last retry failed (lib/runtime/record.ts).
    const last = reason?.replace(/^attempts-used-up: /, '');
    if (
      last !== undefined &&
      INJECTED_TRANSIENT_REASONS.has(last) &&
      attempts >= (maxAttempts[queue] ?? 1) &&
      injected.length >= attempts
    ) {
      return 'retries used up on injected faults';
    }
    return undefined;
  };
  const none = () => undefined;

  for (const booking of plan.bookings) {
    const { bookingId, userId } = booking;
    const entries = logs.get(userId)?.entries.filter((e) => e.bookingId === bookingId) ?? [];
    const stepEvidence = (step: string) => entries.find((e) => e.step === step);
    const current = bookings.get(bookingId);
    const chain: [{ readonly type: string }, string, string | undefined][] = [
      [sampleJobs.reserveInventory, 'reserve', undefined],
      [sampleJobs.confirmReservation, 'confirm', undefined],
      [sampleJobs.issueInvoice, 'invoice', `invoice:${bookingId}`],
    ];
    let startedAtMs = ledger.sentAtMs.get(jobKey(sampleJobs.reserveInventory.type, bookingId));
    let parentDone = true;
    let remaining = 4; // reserve, confirm, invoice, email
    for (const [job, step, reference] of chain) {
      if (!parentDone) break;
      remaining -= 1;
      const evidence = stepEvidence(step);
      const state = account(
        {
          key: jobKey(job.type, bookingId),
          type: job.type,
          queue: 'booking',
          origin: step === 'reserve' ? 'sent' : 'enqueued',
          ...(startedAtMs === undefined ? {} : { startedAtMs }),
          ...(reference ? { sideEffectReference: reference } : {}),
        },
        evidence ? { atMs: evidence.atMs, attempt: evidence.attempt } : undefined,
        step === 'reserve'
          ? (dl) =>
              plan.soldOut.has(bookingId) && dl.attributes.ErrorName === 'OutOfStockError'
                ? 'out of stock (deliberate)'
                : undefined
          : step === 'invoice'
            ? externalFailure('booking', reference)
            : none,
      );
      parentDone = state === 'completed';
      if (state === 'pending') projectedTotal += remaining;
      startedAtMs = evidence?.atMs;
    }
    if (parentDone) {
      const reference = `email:${bookingId}:${CONFIRMATION_TEMPLATE}`;
      account(
        {
          key: jobKey(sampleJobs.sendEmail.type, bookingId),
          type: sampleJobs.sendEmail.type,
          queue: 'notifications',
          origin: 'enqueued',
          ...(startedAtMs === undefined ? {} : { startedAtMs }),
          sideEffectReference: reference,
        },
        current?.emailId && current.emailAtMs !== undefined
          ? { atMs: current.emailAtMs, attempt: current.emailAttempt ?? 1 }
          : undefined,
        externalFailure('notifications', reference),
      );
    }
    if (!plan.soldOut.has(bookingId)) {
      const reference = `payment:${bookingId}`;
      const key = jobKey(sampleJobs.capturePayment.type, bookingId);
      const sentAt = ledger.sentAtMs.get(key);
      account(
        {
          key,
          type: sampleJobs.capturePayment.type,
          queue: 'payments',
          origin: 'sent',
          ...(sentAt === undefined ? {} : { startedAtMs: sentAt }),
          sideEffectReference: reference,
        },
        current?.paymentId && current.paymentAtMs !== undefined
          ? { atMs: current.paymentAtMs, attempt: current.paymentAttempt ?? 1 }
          : undefined,
        externalFailure('payments', reference),
      );
    }
  }
  for (const bad of plan.badMessages) {
    const sentAt = ledger.sentAtMs.get(bad.key);
    account(
      {
        key: bad.key,
        type: `malformed (${bad.kind})`,
        queue: bad.queue,
        origin: 'sent',
        ...(sentAt === undefined ? {} : { startedAtMs: sentAt }),
      },
      undefined,
      () => `deliberate malformed message (${bad.kind})`,
    );
  }
  for (const [key, dls] of deadLettersByKey) {
    if (!known.has(key)) unmatched.push(...dls);
  }
  for (const dl of unmatched) deadLetters.push(toFact(dl, undefined, undefined));

  const count = (state: JobOutcome['state']) => jobs.filter((j) => j.state === state).length;
  return {
    jobs,
    deadLetters,
    completed: count('completed'),
    deadLettered: count('dead-lettered'),
    pending,
    projectedTotal,
  };
}

function matchDeadLetter(dl: CollectedDeadLetter, ledger: SentLedger): string | undefined {
  const source = dl.attributes.SourceMessageId;
  if (source !== undefined) {
    const bad = ledger.badMessageIds.get(source);
    if (bad) return bad;
  }
  try {
    const body = JSON.parse(dl.body) as { type?: unknown; id?: unknown; data?: { bookingId?: unknown } };
    if (typeof body.id === 'string' && body.id.startsWith('bad:')) return body.id;
    if (typeof body.type === 'string' && typeof body.data?.bookingId === 'string') {
      return jobKey(body.type, body.data.bookingId);
    }
  } catch {
    // Not JSON: only the SourceMessageId can match it.
  }
  return undefined;
}

function toFact(
  dl: CollectedDeadLetter,
  key: string | undefined,
  expectedBecause: string | undefined,
): DeadLetterFact {
  const attempts = Number(dl.attributes.Attempts);
  return {
    queue: dl.queue,
    ...(dl.attributes.JobType ? { jobType: dl.attributes.JobType } : {}),
    ...(dl.attributes.ErrorName ? { errorName: dl.attributes.ErrorName } : {}),
    ...(dl.attributes.ErrorReason ? { errorReason: dl.attributes.ErrorReason } : {}),
    ...(dl.attributes.ErrorMessage ? { errorMessage: dl.attributes.ErrorMessage } : {}),
    ...(Number.isFinite(attempts) ? { attempts } : {}),
    ...(key ? { jobKey: key } : {}),
    ...(expectedBecause ? { expectedBecause } : {}),
  };
}

/** Progress of a running workload, for a progress bar or log lines. */
export interface WorkloadProgress {
  readonly phase: 'seeding' | 'sending' | 'running' | 'collecting' | 'done';
  /** Jobs sent by the workload so far. */
  readonly sent: number;
  readonly completed: number;
  readonly deadLettered: number;
  /** Jobs expected by the end (grows and shrinks as chains complete or stop). */
  readonly total: number;
  /** Messages visible, in flight or delayed in the main queues. */
  readonly inQueues: number;
  readonly elapsedMs: number;
}

/** Options of {@link runWorkload}. */
export interface RunWorkloadOptions extends WorkloadOptions {
  /** Deadline for every job to reach a final state, in seconds from the first send. @default 180 */
  readonly timeoutSeconds?: number;
  /** Interval between checks, in ms. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Called at each check. */
  readonly onProgress?: (progress: WorkloadProgress) => void;
  /** The fake service's injected faults per reference (read at the end). */
  readonly faultsByReference?: () => Readonly<Record<string, readonly FaultKind[]>>;
  /**
   * Jobs completed so far, from a cheap source (the workers' `JobCompleted` metric). Without it
   * every check scans the domain table, which competes with the workers for the emulator.
   */
  readonly completedSoFar?: () => number;
}

/** Jobs a plan creates when nothing is dead-lettered: 5 per booking (chain, email, payment), 1 per sold-out booking, the malformed messages. */
export function plannedJobs(plan: WorkloadPlan): number {
  return plan.bookings.length * 5 - plan.soldOut.size * 4 + plan.badMessages.length;
}

/** What {@link runWorkload} found. */
export interface WorkloadResult {
  readonly plan: WorkloadPlan;
  readonly ledger: SentLedger;
  readonly reconciliation: Reconciliation;
  readonly snapshot: DomainSnapshot;
  readonly deadLetters: readonly CollectedDeadLetter[];
  /** First send, epoch ms. */
  readonly startedAtMs: number;
  /** All final (or the deadline), epoch ms. */
  readonly finishedAtMs: number;
  readonly timedOut: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs a workload against a target: seed, send, wait until the main queues stay empty (two
 * checks in a row) or the deadline passes, collect the dead letters, reconcile.
 */
export async function runWorkload(
  target: WorkloadTarget,
  options: RunWorkloadOptions = {},
): Promise<WorkloadResult> {
  const plan = planWorkload(options);
  const timeoutMs = (options.timeoutSeconds ?? 180) * 1000;
  const pollMs = options.pollIntervalMs ?? 1_000;
  const report = options.onProgress ?? (() => {});
  const repository = new DomainRepository({ tableName: target.appTableName, client: target.dynamo });
  const t0 = Date.now();
  let sent = 0;
  // The last figures seen, carried into the phases that do not measure them.
  let last = { completed: 0, deadLettered: 0, total: 0, inQueues: 0 };
  const progress = (phase: WorkloadProgress['phase'], extra: Partial<typeof last> = {}) => {
    last = { ...last, ...extra };
    report({ phase, sent, ...last, elapsedMs: Date.now() - t0 });
  };

  progress('seeding');
  await seedDomain(repository, plan);
  const client = new JobClient({ source: WORKLOAD_SOURCE, queueUrls: target.queueUrls, sqs: target.sqs });
  const startedAtMs = Date.now();
  progress('sending');
  const ledger = await sendWorkload(client, target, plan, (n) => {
    sent += n;
    progress('sending');
  });

  const faults = options.faultsByReference ?? (() => ({}));
  let quiet = 0;
  let timedOut = false;
  for (;;) {
    const activity = await Promise.all(
      Object.values(target.queueUrls).map((url) => queueActivity(target.sqs, url)),
    );
    const dlqActivity = await Promise.all(
      Object.values(target.dlqUrls).map((url) => queueActivity(target.sqs, url)),
    );
    const inQueues = activity.reduce((acc, a) => acc + a.visible + a.inFlight + a.delayed, 0);
    const deadLettered = dlqActivity.reduce((acc, a) => acc + a.visible + a.inFlight + a.delayed, 0);
    if (options.completedSoFar) {
      progress('running', {
        completed: options.completedSoFar(),
        deadLettered,
        total: plannedJobs(plan),
        inQueues,
      });
    } else {
      const partial = reconcile({
        plan,
        ledger,
        snapshot: await repository.snapshot(),
        deadLetters: [],
        faultsByReference: {},
        final: false,
      });
      progress('running', {
        completed: partial.completed,
        deadLettered,
        total: partial.projectedTotal,
        inQueues,
      });
    }
    quiet = inQueues === 0 ? quiet + 1 : 0;
    if (quiet >= 2) break;
    if (Date.now() - startedAtMs > timeoutMs) {
      timedOut = true;
      break;
    }
    await sleep(pollMs);
  }
  const finishedAtMs = Date.now();

  progress('collecting');
  const dlqCounts: Record<string, number> = {};
  for (const [queue, url] of Object.entries(target.dlqUrls)) {
    const a = await queueActivity(target.sqs, url);
    dlqCounts[queue] = a.visible + a.inFlight + a.delayed;
  }
  const deadLetters = await collectDeadLetters(target.sqs, target.dlqUrls, dlqCounts);
  const snapshot = await repository.snapshot();
  const reconciliation = reconcile({
    plan,
    ledger,
    snapshot,
    deadLetters,
    faultsByReference: faults(),
    final: true,
    timedOut,
  });
  progress('done', {
    completed: reconciliation.completed,
    deadLettered: reconciliation.deadLettered,
    total: reconciliation.jobs.length,
  });
  return { plan, ledger, reconciliation, snapshot, deadLetters, startedAtMs, finishedAtMs, timedOut };
}

/** Options of {@link runLocal}: a workload on the local runtime with the fake external service. */
export interface LocalRunOptions extends Omit<RunWorkloadOptions, 'faultsByReference'> {
  /** Fault rates of the fake external service. */
  readonly faults?: Partial<FaultRates>;
  /** Probability that a successful invocation's response is lost (the batch comes back). @default 0 */
  readonly lostResponseRate?: number;
  /**
   * Visibility timeout of the main queues for this local run, in seconds, instead of the
   * deployed one (6 × the function timeout = 180 s): a lost response then comes back within the
   * run. Undefined keeps the deployed value.
   */
  readonly visibilityTimeoutSeconds?: number;
  /** Payment jobs sent a second time with the same id, as a producer retrying would. @default 0 */
  readonly producerDuplicates?: number;
  /** One endpoint for SQS and DynamoDB instead of the embedded emulators (see lib/local/emulators.ts). */
  readonly endpointUrl?: string;
  /** Project root (cdk.json, cdk.out). @default process.cwd() */
  readonly projectRoot?: string;
  /**
   * Timeout of the workers' external calls (`EXTERNAL_API_TIMEOUT_MS`), in ms. Generous by
   * default: on a busy 2-core machine the fake service shares a thread with the emulators. The
   * fake service's `timeout` fault hangs 1 s longer than this. @default 5000
   */
  readonly externalTimeoutMs?: number;
  /** Options of the fake service beyond faults and seed (latency, hang time...). */
  readonly externalService?: Omit<ExternalServiceOptions, 'faults' | 'seed'>;
  /** Called with a line of text at each boot step. */
  readonly onStep?: (message: string) => void;
}

/** What {@link runLocal} found. */
export interface LocalRunResult {
  readonly facts: ReportFacts;
  readonly report: RunReport;
  readonly workload: WorkloadResult;
  /** The fake service's counters at the end. */
  readonly service: ExternalServiceStats;
  /** The local runtime's invocation counters at the end. */
  readonly runtime: RuntimeStats;
  /** Sums of the workers' EMF metrics (`JobCompleted`, `JobRetried`, ...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** Differences from AWS noted by the local runtime, and local overrides. */
  readonly notes: readonly string[];
}

/** Sums the values of EMF metrics found in a function's stdout line into `into`; ignores other lines. */
export function addEmfMetrics(line: string, into: Record<string, number>): void {
  if (!line.startsWith('{') || !line.includes('"_aws"')) return;
  let blob: Record<string, unknown>;
  try {
    blob = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const aws = blob._aws as { CloudWatchMetrics?: { Metrics?: { Name?: string }[] }[] } | undefined;
  for (const directive of aws?.CloudWatchMetrics ?? []) {
    for (const metric of directive.Metrics ?? []) {
      if (!metric.Name || metric.Name === 'JobDuration') continue;
      const value = blob[metric.Name];
      const values = Array.isArray(value) ? value : [value];
      for (const v of values) if (typeof v === 'number') into[metric.Name] = (into[metric.Name] ?? 0) + v;
    }
  }
}

/** Options of {@link startSampleStack}. */
export type SampleStackOptions = Pick<
  LocalRunOptions,
  | 'seed'
  | 'faults'
  | 'lostResponseRate'
  | 'visibilityTimeoutSeconds'
  | 'endpointUrl'
  | 'projectRoot'
  | 'externalTimeoutMs'
  | 'externalService'
  | 'onStep'
>;

/** The sample stack running locally with its fake external service. */
export interface SampleStack {
  readonly runtime: LocalRuntime;
  readonly service: ExternalService;
  readonly target: WorkloadTarget;
  /** The domain table. */
  readonly repository: DomainRepository;
  /** Running sums of the workers' EMF metrics (`JobCompleted`, `JobDuplicateAbsorbed`, ...). */
  readonly metrics: Readonly<Record<string, number>>;
  /** The runtime's warnings and the local overrides applied. */
  readonly notes: readonly string[];
  /** Stops the runtime and the fake service. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the fake external service and the local runtime (synthesizing cdk.out when stale) with
 * `EXTERNAL_API_URL` pointed at the service, and collects the workers' metrics from their stdout.
 * `SQS_JOBS_FUNCTION_LOGS=1` also prints the functions' logs on stderr.
 * @throws what {@link startLocalRuntime} throws; whatever was started is stopped first.
 */
export async function startSampleStack(options: SampleStackOptions = {}): Promise<SampleStack> {
  const step = options.onStep ?? (() => {});
  const seed = options.seed ?? 1;
  const notes: string[] = [];
  step('starting the fake payment / mail / invoice service');
  const externalTimeoutMs = options.externalTimeoutMs ?? 5_000;
  const service = await startExternalService({
    hangMs: externalTimeoutMs + 1_000,
    ...options.externalService,
    faults: options.faults,
    seed,
  });
  const metrics: Record<string, number> = {};
  const showLogs =
    process.env[RUNTIME_ENV.functionLogs] === '1' || process.env[RUNTIME_ENV.functionLogs] === 'true';
  let runtime: LocalRuntime | undefined;
  try {
    step('synthesizing (or reusing) cdk.out and starting the local runtime');
    runtime = await startLocalRuntime({
      ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
      ...(options.endpointUrl ? { endpoints: { endpointUrl: options.endpointUrl } } : {}),
      environment: { EXTERNAL_API_URL: service.url, EXTERNAL_API_TIMEOUT_MS: String(externalTimeoutMs) },
      lostResponseRate: options.lostResponseRate ?? 0,
      seed,
      // Execution environments initialised during boot, so cold starts do not stall the first jobs.
      prewarm: true,
      functionLogs: (line) => {
        if (line.stream === 'stdout') addEmfMetrics(line.line, metrics);
        if (showLogs) process.stderr.write(`[${line.functionLogicalId}] ${line.line}\n`);
      },
    });
    notes.push(...runtime.warnings);
    const target = targetOf(runtime);
    if (options.visibilityTimeoutSeconds !== undefined) {
      for (const url of Object.values(target.queueUrls)) {
        await runtime.sqs.send(
          new SetQueueAttributesCommand({
            QueueUrl: url,
            Attributes: { VisibilityTimeout: String(options.visibilityTimeoutSeconds) },
          }),
        );
      }
      notes.push(
        `local override: visibility timeout of the main queues set to ${options.visibilityTimeoutSeconds} s (deployed: 6 × function timeout) so lost responses come back within the run`,
      );
    }
    const running = runtime;
    let stopped: Promise<void> | undefined;
    return {
      runtime: running,
      service,
      target,
      repository: new DomainRepository({ tableName: target.appTableName, client: target.dynamo }),
      metrics,
      notes,
      stop: () => {
        stopped ??= (async () => {
          await running.stop();
          await service.close();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await runtime?.stop();
    await service.close();
    throw error;
  }
}

/**
 * Boots the local runtime (synthesizing cdk.out when stale) with `EXTERNAL_API_URL` pointed at
 * the fake external service, runs the workload, stops everything and builds the report.
 * @throws what {@link startLocalRuntime} throws when the stack cannot start; the workload's send errors.
 */
export async function runLocal(options: LocalRunOptions = {}): Promise<LocalRunResult> {
  const step = options.onStep ?? (() => {});
  const bootStart = Date.now();
  const stack = await startSampleStack(options);
  const { runtime, service, target, metrics, notes } = stack;
  try {
    const bootMs = Date.now() - bootStart;
    step(
      `running the workload (endpoints: SQS ${runtime.endpoints.sqs}, DynamoDB ${runtime.endpoints.dynamodb})`,
    );
    const workload = await runWorkload(target, {
      ...options,
      faultsByReference: () => service.stats().faultsByReference,
      completedSoFar: () => metrics.JobCompleted ?? 0,
    });
    const serviceStats = service.stats();
    const runtimeStats = runtime.stats();
    const facts: ReportFacts = {
      startedAtMs: workload.startedAtMs,
      finishedAtMs: workload.finishedAtMs,
      bootMs,
      timedOut: workload.timedOut,
      jobs: workload.reconciliation.jobs,
      deadLetters: workload.reconciliation.deadLetters,
      orderLogs: workload.snapshot.orderLogs,
      sideEffects: { byKey: serviceStats.sideEffectsByKey, byReference: serviceStats.sideEffectsByReference },
      faultsInjected: {
        'API timeout': serviceStats.faults.timeout,
        'API 429': serviceStats.faults.throttle,
        'API 503': serviceStats.faults.unavailable,
        'API 400': serviceStats.faults.badRequest,
        'API slow': serviceStats.faults.slow,
        'lost response': runtimeStats.totals.lostResponses,
        'producer resend': workload.ledger.resent,
        'malformed message': workload.plan.badMessages.length,
        'out-of-stock booking': workload.plan.soldOut.size,
      },
      duplicatesAbsorbed: metrics.JobDuplicateAbsorbed ?? 0,
      duplicatesSource: 'JobDuplicateAbsorbed metric of the workers',
      workerMetrics: { ...metrics },
    };
    return {
      facts,
      report: buildReport(facts),
      workload,
      service: serviceStats,
      runtime: runtimeStats,
      metrics: { ...metrics },
      notes,
    };
  } finally {
    step('stopping');
    await stack.stop();
  }
}

/** The workload's view of a running local stack: the sample queues by logical name, their DLQs, the domain table. */
export function targetOf(runtime: LocalRuntime): WorkloadTarget {
  const queueUrls: Record<string, string> = {};
  const dlqUrls: Record<string, string> = {};
  for (const { name } of SAMPLE_QUEUES) {
    const queue = runtime.queue(name);
    queueUrls[name] = queue.url;
    if (queue.deadLetterQueue) dlqUrls[name] = queue.deadLetterQueue.url;
  }
  const appTableName =
    runtime.outputs.AppTableName ?? runtime.workers.find((w) => w.env.APP_TABLE)?.env.APP_TABLE ?? '';
  if (!appTableName) throw new Error('the stack has no AppTableName output and no worker has APP_TABLE');
  return {
    queueUrls,
    dlqUrls,
    appTableName,
    sqs: runtime.sqs,
    dynamo: DynamoDBDocumentClient.from(runtime.dynamodb, {
      marshallOptions: { removeUndefinedValues: true },
    }),
  };
}
