/**
 * X-Ray in the worker (lib/runtime/tracing.ts): decided per invocation from the trace header,
 * the tracer loaded only for a sampled one and only once, one subsegment per record with its
 * type, key and outcome as annotations and the envelope as metadata. The Powertools Tracer is
 * replaced by a fake here (its import would put the X-Ray SDK in Lambda mode in the test
 * process); the real one runs bundled in the local runtime (test/integration/local-recursion.test.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import {
  isInvocationSampled,
  JOB_TRACE_METADATA_NAMESPACE,
  JobTracing,
  SubsegmentJobTracer,
} from '../../lib/runtime/tracing.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

/** A subsegment as the fake records it. */
interface FakeSubsegment {
  name: string;
  start_time: number;
  end_time?: number;
  annotations: Record<string, unknown>;
  metadata: Record<string, Record<string, unknown>>;
  error?: boolean;
  fault?: boolean;
}

/** The Powertools Tracer as far as tracing.ts uses it, recording closed subsegments. */
class FakeTracer {
  readonly closed: FakeSubsegment[] = [];
  constructor(readonly enabled = true) {}
  isTracingEnabled(): boolean {
    return this.enabled;
  }
  getSegment() {
    const closed = this.closed;
    return {
      addNewSubsegment(name: string) {
        const sub: FakeSubsegment = { name, start_time: Date.now() / 1000, annotations: {}, metadata: {} };
        return {
          set start_time(value: number) {
            sub.start_time = value;
          },
          get start_time() {
            return sub.start_time;
          },
          addAnnotation: (key: string, value: unknown) => {
            sub.annotations[key] = value;
          },
          addMetadata: (key: string, value: unknown, namespace = 'default') => {
            sub.metadata[namespace] = { ...sub.metadata[namespace], [key]: value };
          },
          addErrorFlag: () => {
            sub.error = true;
          },
          addFaultFlag: () => {
            sub.fault = true;
          },
          close: () => {
            sub.end_time = Date.now() / 1000;
            closed.push(sub);
          },
        };
      },
    };
  }
}

const SAMPLED =
  'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=1:abcd1234:0';
const UNSAMPLED = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0';

describe('JobTracing: per invocation, from the trace header', () => {
  it('is off, without loading anything, when the header is absent, unsampled, or tracing is disabled', () => {
    const load = vi.fn(async () => new FakeTracer());
    for (const env of [
      {},
      { _X_AMZN_TRACE_ID: UNSAMPLED },
      { _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793' }, // PassThrough: Root only
      { _X_AMZN_TRACE_ID: SAMPLED, POWERTOOLS_TRACE_ENABLED: 'false' },
    ]) {
      expect(new JobTracing({ env, load }).forInvocation()).toBeUndefined();
    }
    expect(load).not.toHaveBeenCalled();
    expect(isInvocationSampled({ _X_AMZN_TRACE_ID: SAMPLED })).toBe(true);
  });

  it('loads the tracer on the first sampled invocation only, and reads the header again each time', async () => {
    const env: Record<string, string | undefined> = { _X_AMZN_TRACE_ID: UNSAMPLED };
    const load = vi.fn(async () => new FakeTracer());
    const tracing = new JobTracing({ env, load });
    expect(tracing.forInvocation()).toBeUndefined();
    env._X_AMZN_TRACE_ID = SAMPLED;
    const first = await tracing.forInvocation();
    const second = await tracing.forInvocation();
    expect(first).toBeInstanceOf(SubsegmentJobTracer);
    expect(second).toBe(first);
    env._X_AMZN_TRACE_ID = UNSAMPLED;
    expect(tracing.forInvocation()).toBeUndefined();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('stays off when the tracer says tracing is disabled (outside Lambda) or cannot be loaded, saying so once', async () => {
    const env = { _X_AMZN_TRACE_ID: SAMPLED };
    expect(await new JobTracing({ env, load: async () => new FakeTracer(false) }).forInvocation()).toBe(
      undefined,
    );
    const onLoadError = vi.fn();
    const broken = new JobTracing({
      env,
      onLoadError,
      load: async () => {
        throw new Error('Cannot find package');
      },
    });
    expect(await broken.forInvocation()).toBeUndefined();
    expect(await broken.forInvocation()).toBeUndefined();
    expect(onLoadError).toHaveBeenCalledTimes(1);
  });
});

describe('SubsegmentJobTracer', () => {
  it('writes one subsegment: annotations type, key, outcome, queue; envelope and lineage as metadata; flags', () => {
    const fake = new FakeTracer();
    const tracer = new SubsegmentJobTracer(fake);
    const startedAtMs = Date.now() - 25;
    const envelope = {
      specversion: '1.0',
      id: 'job-1',
      source: '/checkout',
      type: 'payments.capture',
      time: '2026-01-01T00:00:00.000Z',
      data: { secret: 'not copied' },
      causationid: 'parent-1',
      rootid: 'root-1',
      correlationid: 'order-9',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    };
    tracer.recordJob({
      jobType: 'payments.capture',
      key: 'order-9',
      outcome: 'dead-lettered',
      queue: 'payments',
      messageId: 'm-1',
      receiveCount: 2,
      envelope,
      startedAtMs,
    });
    tracer.recordJob({
      jobType: 'payments.capture',
      key: 'k'.repeat(300),
      outcome: 'retry',
      retryReason: 'transient',
      queue: 'payments',
      messageId: 'm-2',
      receiveCount: 1,
      envelope: undefined,
      startedAtMs,
    });
    tracer.recordJob({
      jobType: undefined,
      key: undefined,
      outcome: 'dead-lettered',
      queue: 'payments',
      messageId: 'm-3',
      receiveCount: 1,
      envelope: undefined,
      startedAtMs,
    });
    const [dead, retried, unreadable] = fake.closed;
    expect(dead).toMatchObject({
      name: '## payments.capture',
      start_time: startedAtMs / 1000,
      annotations: {
        jobType: 'payments.capture',
        jobKey: 'order-9',
        outcome: 'dead-lettered',
        queue: 'payments',
      },
      fault: true,
    });
    expect(dead?.end_time).toBeGreaterThanOrEqual(dead?.start_time ?? Number.POSITIVE_INFINITY);
    expect(dead?.metadata[JOB_TRACE_METADATA_NAMESPACE]).toEqual({
      job: {
        messageId: 'm-1',
        receiveCount: 2,
        envelope: {
          id: 'job-1',
          source: '/checkout',
          time: '2026-01-01T00:00:00.000Z',
          causationid: 'parent-1',
          rootid: 'root-1',
          correlationid: 'order-9',
          traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        },
      },
    });
    // A long key is cut in the annotation and kept whole in the metadata.
    expect(retried?.annotations.jobKey).toBe('k'.repeat(250));
    expect(retried?.metadata[JOB_TRACE_METADATA_NAMESPACE]?.job).toMatchObject({
      retryReason: 'transient',
      jobKey: 'k'.repeat(300),
    });
    expect(retried).toMatchObject({ error: true, annotations: { outcome: 'retry' } });
    expect(unreadable).toMatchObject({ name: '## unknown', annotations: { outcome: 'dead-lettered' } });
    expect(unreadable?.annotations).not.toHaveProperty('jobType');
  });
});

describe('createWorker with tracing', () => {
  const schema = z.object({ orderId: z.string(), mode: z.enum(['ok', 'retry', 'fail']) });
  const job = defineJob({
    type: 'orders.capture',
    queue: 'jobs',
    schema,
    idempotency: { key: (d) => `order:${d.orderId}` },
    run: async ({ mode }) => {
      if (mode === 'retry') throw new TransientError('upstream 503');
      if (mode === 'fail') throw new PermanentError('card declined');
      return { ok: true };
    },
  });
  const record = (orderId: string, mode: string) =>
    sqsRecord({ body: jobBody(job.type, { orderId, mode }, { id: `id-${orderId}` }) });

  it('a sampled invocation records one subsegment per record, with its outcome; an unsampled one none', async () => {
    const fake = new FakeTracer();
    const options: unknown[] = [];
    vi.doMock('@aws-lambda-powertools/tracer', () => ({
      Tracer: class {
        constructor(given: unknown) {
          options.push(given);
          // biome-ignore lint/correctness/noConstructorReturn: the fake stands in for the Tracer.
          return fake;
        }
      },
    }));
    try {
      const env: Record<string, string | undefined> = { _X_AMZN_TRACE_ID: SAMPLED };
      const h = workerHarness({ jobs: [job], env });
      await h.invoke([
        record('o1', 'ok'),
        record('o2', 'retry'),
        record('o3', 'fail'),
        sqsRecord({ body: '{' }),
      ]);
      const byKey = Object.fromEntries(fake.closed.map((s) => [String(s.annotations.jobKey), s.annotations]));
      expect(fake.closed).toHaveLength(4);
      expect(byKey['order:o1']).toEqual({
        jobType: 'orders.capture',
        jobKey: 'order:o1',
        outcome: 'completed',
        queue: 'jobs',
      });
      expect(byKey['order:o2']?.outcome).toBe('retry');
      expect(byKey['order:o3']?.outcome).toBe('dead-lettered');
      expect(byKey.undefined).toEqual({ outcome: 'dead-lettered', queue: 'jobs' });
      env._X_AMZN_TRACE_ID = UNSAMPLED;
      await h.invoke([record('o4', 'ok')]);
      expect(fake.closed).toHaveLength(4);
    } finally {
      vi.doUnmock('@aws-lambda-powertools/tracer');
    }
  });
});
