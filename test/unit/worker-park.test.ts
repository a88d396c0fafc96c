/**
 * FIFO after a dead letter: `onDeadLetter: 'park'` through createWorker, on a fake store that
 * keeps parked groups like the DynamoDB one. A permanent failure parks its group: the group's
 * later records are dead-lettered as `GroupParked` naming the blocker, in this batch and in later
 * invocations on other instances; other groups go on; the blocker's redrive runs it and, once it
 * completes, the group runs again. `continue` (the default) keeps today's behaviour and never
 * asks the store.
 */
import type { SendMessageCommandInput } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import type {
  GroupPark,
  GroupParkStore,
  ParkGroupOutcome,
  ParkGroupRequest,
  UnparkOutcome,
} from '../../lib/runtime/idempotency/guard.ts';
import { groupRecordKey, jobRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { type DeadLetterPolicy, defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { WorkerConfigError } from '../../lib/runtime/worker-errors.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { FIFO_QUEUE_URL, failedIds, workerHarness } from '../factories/worker.ts';

/** FakeGuard plus parked groups kept in memory, with the DynamoDB store's semantics; counts calls. */
class ParkingGuard extends FakeGuard implements GroupParkStore {
  readonly parks = new Map<string, GroupPark>();
  readonly calls: string[] = [];
  failOn: ReadonlySet<'read' | 'park' | 'unpark'> = new Set();

  #fail(op: 'read' | 'park' | 'unpark'): void {
    this.calls.push(op);
    if (this.failOn.has(op)) throw new TransientError(`store ${op} throttled`);
  }

  async readGroupPark(queueName: string, messageGroupId: string): Promise<GroupPark | undefined> {
    this.#fail('read');
    return this.parks.get(groupRecordKey(queueName, messageGroupId));
  }

  async parkGroup(request: ParkGroupRequest): Promise<ParkGroupOutcome> {
    this.#fail('park');
    const pk = groupRecordKey(request.queueName, request.messageGroupId);
    const old = this.parks.get(pk);
    if (old && old.blockerPk !== request.blockerPk) return { status: 'parked-by-other', park: old };
    const now = Date.now();
    const park: GroupPark = {
      pk,
      ...request,
      parkedAtMs: old?.parkedAtMs ?? now,
      updatedAtMs: now,
      parkCount: (old?.parkCount ?? 0) + 1,
      expiresAt: Math.floor(now / 1000) + 1_209_600,
    };
    this.parks.set(pk, park);
    return { status: 'parked', park };
  }

  async unparkGroup(queueName: string, messageGroupId: string, blockerPk: string): Promise<UnparkOutcome> {
    this.#fail('unpark');
    const pk = groupRecordKey(queueName, messageGroupId);
    const old = this.parks.get(pk);
    if (!old) return 'not-parked';
    if (old.blockerPk !== blockerPk) return 'parked-by-other';
    this.parks.delete(pk);
    return 'cleared';
  }
}

const schema = z.object({ step: z.string() });

/**
 * Booking steps that record the order they ran in; a step fails permanently while it is in
 * `broken` (the cause an operator fixes).
 */
function bookingJobs(
  ran: string[],
  broken: Set<string>,
  policies: { confirm?: DeadLetterPolicy; invoice?: DeadLetterPolicy } = { confirm: 'park' },
): AnyJob[] {
  const run = async ({ step }: { step: string }) => {
    ran.push(step);
    if (broken.has(step)) throw new PermanentError(`reservation for ${step} does not exist`);
  };
  return [
    defineJob({
      type: 'booking.confirm',
      queue: 'booking',
      schema,
      ...(policies.confirm === undefined ? {} : { onDeadLetter: policies.confirm }),
      run,
    }),
    defineJob({
      type: 'booking.invoice',
      queue: 'booking',
      schema,
      ...(policies.invoice === undefined ? {} : { onDeadLetter: policies.invoice }),
      run,
    }),
  ];
}

let counter = 0;
/** A FIFO record of `group`; `id` fixes the envelope id (a redrive resends the same body with a new messageId). */
function fifoRecord(group: string, step: string, type = 'booking.confirm', id = `${step}-${++counter}`) {
  return sqsRecord({ body: jobBody(type, { step }, { partitionKey: group, id }), groupId: group });
}

/** The same body with a new SQS messageId, as a redrive delivers it. */
function redelivered(record: SQSRecord): SQSRecord {
  return sqsRecord({ body: record.body, groupId: record.attributes.MessageGroupId as string });
}

function harness(guard: ParkingGuard, jobs: AnyJob[], options: { onDeadLetter?: DeadLetterPolicy } = {}) {
  return workerHarness({ fifo: true, jobs, idempotency: guard, random: () => 0.9999, ...options });
}

const attr = (message: SendMessageCommandInput | undefined, name: string) =>
  message?.MessageAttributes?.[name]?.StringValue;
const stepOf = (message: SendMessageCommandInput | undefined) =>
  (JSON.parse(message?.MessageBody ?? '{}') as { data: { step: string } }).data.step;

describe("onDeadLetter: 'park' on a FIFO queue", () => {
  it('refuses to run on a queue whose role may not clear a park (JOBS_GROUP_PARKING=false): every record failed, nothing run, the fix named', async () => {
    const ran: string[] = [];
    const env = (parking: string) =>
      workerHarness({
        fifo: true,
        jobs: bookingJobs(ran, new Set()),
        idempotency: new ParkingGuard(),
        env: { JOBS_GROUP_PARKING: parking },
      });
    const record = fifoRecord('A', 'A1');
    const refused = await env('false').invoke([record]);
    expect(failedIds(refused.response)).toEqual([record.messageId]);
    expect(ran).toEqual([]);
    expect(JSON.stringify(refused.logs)).toContain(
      "onDeadLetter: 'park' (job booking.confirm) but queue jobs was built without group parking (JOBS_GROUP_PARKING=false",
    );
    const allowed = await env('true').invoke([fifoRecord('A', 'A2')]);
    expect(allowed.response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A2']);
  });

  it('dead-letters the later records of the group as GroupParked naming the blocker; other groups go on', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = harness(guard, bookingJobs(ran, new Set(['A2'])));
    const records = [
      fifoRecord('A', 'A1'),
      fifoRecord('B', 'B1'),
      fifoRecord('A', 'A2'),
      fifoRecord('B', 'B2', 'booking.invoice'),
      fifoRecord('A', 'A3', 'booking.invoice'),
      fifoRecord('A', 'A4'),
    ];
    const { response } = await h.invoke(records);

    expect(response.batchItemFailures).toEqual([]);
    expect(ran.filter((s) => s.startsWith('A'))).toEqual(['A1', 'A2']);
    expect(ran.filter((s) => s.startsWith('B'))).toEqual(['B1', 'B2']);
    const dead = h.sqs.sentTo(h.dlqUrl);
    expect(dead.map(stepOf)).toEqual(['A2', 'A3', 'A4']);
    expect(dead.map((m) => m.MessageGroupId)).toEqual(['A', 'A', 'A']);
    expect(attr(dead[0], 'ErrorReason')).toBe('PermanentError');
    const blocker = records[2] as SQSRecord;
    const blockerId = (JSON.parse(blocker.body) as { id: string }).id;
    for (const parked of dead.slice(1)) {
      expect(attr(parked, 'ErrorReason')).toBe('GroupParked');
      expect(attr(parked, 'ErrorName')).toBe('GroupParkedError');
      expect(parked.MessageAttributes?.Attempts?.StringValue).toBe('0');
      const message = attr(parked, 'ErrorMessage') ?? '';
      expect(message).toContain('booking.confirm');
      expect(message).toContain(JSON.stringify(blockerId));
      expect(message).toContain(blocker.messageId);
      expect(message).toContain('PermanentError');
      expect(message).toContain(groupRecordKey('jobs', 'A'));
      // No code failed: the evidence carries no stack frames of the worker.
      expect(attr(parked, 'ErrorStack')).not.toMatch(/\n\s+at /);
    }
    // The park is in the store, naming the blocker; B never was parked.
    const park = guard.parks.get(groupRecordKey('jobs', 'A'));
    expect(park).toMatchObject({
      blockerJobType: 'booking.confirm',
      blockerJobId: blockerId,
      blockerMessageId: blocker.messageId,
      blockerReason: 'PermanentError',
      parkCount: 1,
    });
    expect(guard.parks.has(groupRecordKey('jobs', 'B'))).toBe(false);
    // One read per group, none for the later records of a group; one park write.
    expect(guard.calls.filter((c) => c === 'read')).toHaveLength(2);
    expect(guard.calls.filter((c) => c === 'park')).toHaveLength(1);
  });

  it('parks the records of the group that arrive later, on another instance, without running them', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const broken = new Set(['A1']);
    await harness(guard, bookingJobs(ran, broken)).invoke([fifoRecord('A', 'A1')]);

    // A cold instance (nothing in memory) sharing the table.
    const other = harness(guard, bookingJobs(ran, broken));
    const later = [fifoRecord('A', 'A2', 'booking.invoice'), fifoRecord('C', 'C1')];
    const { response } = await other.invoke(later);

    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A1', 'C1']);
    const dead = other.sqs.sentTo(other.dlqUrl);
    expect(dead.map(stepOf)).toEqual(['A2']);
    expect(attr(dead[0], 'ErrorReason')).toBe('GroupParked');
    expect(attr(dead[0], 'JobType')).toBe('booking.invoice');
  });

  it('runs the redriven blocker, clears the park once it completes, and the group runs again in order', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const broken = new Set(['A1']);
    const h = harness(guard, bookingJobs(ran, broken));
    const first = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2', 'booking.invoice'), fifoRecord('A', 'A3')];
    await h.invoke(first);
    expect(ran).toEqual(['A1']);

    // The cause is fixed; the DLQ group comes back in order, with new message ids.
    broken.clear();
    const redrive = first.map(redelivered);
    const { response } = await h.invoke(redrive);

    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A1', 'A1', 'A2', 'A3']);
    expect(guard.parks.size).toBe(0);
    expect(h.sqs.sentTo(h.dlqUrl)).toHaveLength(3);
    // Free again: a new record reads "not parked" and runs.
    await h.invoke([fifoRecord('A', 'A4')]);
    expect(ran.at(-1)).toBe('A4');
  });

  it('parks again when the redriven blocker fails again: the followers follow it to the DLQ, in order', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = harness(guard, bookingJobs(ran, new Set(['A1'])));
    const first = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2', 'booking.invoice')];
    await h.invoke(first);
    const redrive = first.map(redelivered);
    await h.invoke(redrive);

    expect(ran).toEqual(['A1', 'A1']);
    const dead = h.sqs.sentTo(h.dlqUrl);
    expect(dead.map(stepOf)).toEqual(['A1', 'A2', 'A1', 'A2']);
    expect(dead.map((m) => attr(m, 'ErrorReason'))).toEqual([
      'PermanentError',
      'GroupParked',
      'PermanentError',
      'GroupParked',
    ]);
    const park = guard.parks.get(groupRecordKey('jobs', 'A'));
    expect(park?.parkCount).toBe(2);
    expect(park?.blockerMessageId).toBe(redrive[0]?.messageId);
    // The second GroupParked names the blocker's new message.
    expect(attr(dead[3], 'ErrorMessage')).toContain(redrive[0]?.messageId);
  });

  it("parks only on a job whose policy is 'park'; the followers of any job type are held", async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = harness(guard, bookingJobs(ran, new Set(['A1', 'B1']), { confirm: 'park' }));
    const { response } = await h.invoke([
      fifoRecord('A', 'A1', 'booking.invoice'), // default policy: continue
      fifoRecord('A', 'A2', 'booking.confirm'),
      fifoRecord('B', 'B1', 'booking.confirm'), // park
      fifoRecord('B', 'B2', 'booking.confirm'),
      fifoRecord('B', 'B3', 'booking.invoice'),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(expect.arrayContaining(['A1', 'A2', 'B1']));
    expect(ran).not.toContain('B2');
    expect(ran).not.toContain('B3');
    expect([...guard.parks.values()].map((p) => p.messageGroupId)).toEqual(['B']);
  });

  it("takes the worker's onDeadLetter as the default of jobs that do not set theirs, and a job's own 'continue' over it", async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = harness(guard, bookingJobs(ran, new Set(['A1', 'B1']), { confirm: 'continue' }), {
      onDeadLetter: 'park',
    });
    await h.invoke([
      fifoRecord('A', 'A1', 'booking.invoice'), // worker default: park
      fifoRecord('A', 'A2'),
      fifoRecord('B', 'B1', 'booking.confirm'), // its own: continue
      fifoRecord('B', 'B2'),
    ]);
    expect(ran).toEqual(expect.arrayContaining(['A1', 'B1', 'B2']));
    expect(ran).not.toContain('A2');
    expect([...guard.parks.keys()]).toEqual([groupRecordKey('jobs', 'A')]);
  });

  it('parks under the envelope identity when the data failed its schema, and recognises the fixed redrive', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = harness(guard, bookingJobs(ran, new Set()), { onDeadLetter: 'park' });
    const bad = sqsRecord({
      body: jobBody('booking.confirm', { step: 42 }, { partitionKey: 'A', id: 'bad-1' }),
      groupId: 'A',
    });
    await h.invoke([bad, fifoRecord('A', 'A2')]);
    expect(ran).toEqual([]);
    expect(h.sqs.sentTo(h.dlqUrl).map((m) => attr(m, 'ErrorReason'))).toEqual([
      'JobDataInvalidError',
      'GroupParked',
    ]);
    expect(guard.parks.get(groupRecordKey('jobs', 'A'))?.blockerPk).toBe(
      jobRecordKey('booking.confirm', '/tests\nbad-1'),
    );

    // Fixed by hand (same job id, valid data), sent again: it is the blocker, runs, unparks.
    const fixed = sqsRecord({
      body: jobBody('booking.confirm', { step: 'A1' }, { partitionKey: 'A', id: 'bad-1' }),
      groupId: 'A',
    });
    await h.invoke([fixed, fifoRecord('A', 'A3')]);
    expect(ran).toEqual(['A1', 'A3']);
    expect(guard.parks.size).toBe(0);
  });

  it('does not dead-letter a parking job whose park cannot be written: it stays on the queue and holds its group', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    guard.failOn = new Set(['park']);
    const h = harness(guard, bookingJobs(ran, new Set(['A1'])));
    const records = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2'), fifoRecord('B', 'B1')];
    const { response } = await h.invoke(records);

    expect(failedIds(response)).toEqual([records[0]?.messageId, records[1]?.messageId]);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
    expect(ran).toEqual(expect.arrayContaining(['A1', 'B1']));
    expect(ran).not.toContain('A2');
    // Released, not failed: its next delivery counts on and is dead-lettered (and parks) then.
    expect(guard.leaseCalls.filter((c) => c.op === 'fail').map((c) => c.op === 'fail' && c.kind)).toEqual([
      'transient',
    ]);
  });

  it('retries a record whose group cannot be read, without running it', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    guard.failOn = new Set(['read']);
    const h = harness(guard, bookingJobs(ran, new Set()));
    const records = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2')];
    const { response } = await h.invoke(records);
    expect(failedIds(response)).toEqual(records.map((r) => r.messageId));
    expect(ran).toEqual([]);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
  });

  it('reports the completed blocker failed when the park cannot be cleared; its next delivery is absorbed and clears it', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const broken = new Set(['A1']);
    const h = harness(guard, bookingJobs(ran, broken));
    const first = [fifoRecord('A', 'A1'), fifoRecord('A', 'A2')];
    await h.invoke(first);
    broken.clear();
    guard.failOn = new Set(['unpark']);
    const redrive = first.map(redelivered);
    const one = await h.invoke(redrive);

    // Completed, but the group stays behind it: A2 does not run into a stale park.
    expect(failedIds(one.response)).toEqual(redrive.map((r) => r.messageId));
    expect(ran).toEqual(['A1', 'A1']);
    expect(guard.parks.size).toBe(1);

    guard.failOn = new Set();
    const two = await h.invoke(redrive);
    expect(two.response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A1', 'A1', 'A2']);
    expect(guard.parks.size).toBe(0);
  });
});

describe("onDeadLetter: 'park' with a job that opts out of idempotency", () => {
  it('parks and unparks all the same: the park does not depend on the job record', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const broken = new Set(['A1']);
    const job = defineJob({
      type: 'booking.notify',
      queue: 'booking',
      schema,
      onDeadLetter: 'park',
      idempotency: { enabled: false },
      run: async ({ step }) => {
        ran.push(step);
        if (broken.has(step)) throw new PermanentError(`no address for ${step}`);
      },
    });
    const h = harness(guard, [job]);
    const first = [fifoRecord('A', 'A1', 'booking.notify'), fifoRecord('A', 'A2', 'booking.notify')];
    await h.invoke(first);
    expect(ran).toEqual(['A1']);
    expect(guard.begins).toEqual([]);

    broken.clear();
    await h.invoke(first.map(redelivered));
    expect(ran).toEqual(['A1', 'A1', 'A2']);
    expect(guard.parks.size).toBe(0);
  });
});

describe("onDeadLetter: 'continue' (the default)", () => {
  it('lets the group go on after a dead letter and never asks the store about groups', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = harness(guard, bookingJobs(ran, new Set(['A2']), {}));
    const { response } = await h.invoke([
      fifoRecord('A', 'A1'),
      fifoRecord('A', 'A2'),
      fifoRecord('A', 'A3', 'booking.invoice'),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['A1', 'A2', 'A3']);
    expect(h.sqs.sentTo(h.dlqUrl).map(stepOf)).toEqual(['A2']);
    expect(guard.calls).toEqual([]);
  });

  it('never reads groups on a standard queue, even with park', async () => {
    const ran: string[] = [];
    const guard = new ParkingGuard();
    const h = workerHarness({
      jobs: bookingJobs(ran, new Set(['s1'])),
      idempotency: guard,
      onDeadLetter: 'park',
    });
    await h.invoke([
      sqsRecord({ body: jobBody('booking.confirm', { step: 's1' }), groupId: 'tenant', queue: 'jobs' }),
      sqsRecord({ body: jobBody('booking.confirm', { step: 's2' }), groupId: 'tenant', queue: 'jobs' }),
    ]);
    expect(ran.sort()).toEqual(['s1', 's2']);
    expect(guard.calls).toEqual([]);
  });
});

describe('configuration of onDeadLetter', () => {
  const base = {
    queueName: 'jobs',
    queueUrl: FIFO_QUEUE_URL,
    dlqUrl: FIFO_QUEUE_URL,
    env: {},
    sqs: new FakeSqs(),
  };

  it('refuses an unknown policy on a job and on the worker', () => {
    expect(() =>
      defineJob({
        type: 't',
        queue: 'q',
        schema,
        onDeadLetter: 'hold' as DeadLetterPolicy,
        run: async () => {},
      }),
    ).toThrow(/onDeadLetter must be 'continue' or 'park', got "hold"/);
    expect(() =>
      createWorker({
        ...base,
        jobs: bookingJobs([], new Set(), {}),
        onDeadLetter: 'stop' as DeadLetterPolicy,
      }),
    ).toThrow(/onDeadLetter must be 'continue' or 'park', got "stop"/);
  });

  it('refuses parking without an idempotency store that keeps parked groups', () => {
    const jobs = bookingJobs([], new Set(), { confirm: 'park' });
    expect(() => createWorker({ ...base, jobs, idempotency: false })).toThrow(WorkerConfigError);
    expect(() => createWorker({ ...base, jobs, idempotency: false })).toThrow(
      /onDeadLetter: 'park' \(job booking\.confirm\) needs the idempotency table/,
    );
    expect(() =>
      createWorker({
        ...base,
        jobs: bookingJobs([], new Set(), {}),
        onDeadLetter: 'park',
        idempotency: new FakeGuard(),
      }),
    ).toThrow(/needs an idempotency guard that keeps parked groups/);
    // continue needs nothing.
    expect(() =>
      createWorker({ ...base, jobs: bookingJobs([], new Set(), {}), idempotency: false }),
    ).not.toThrow();
  });
});
