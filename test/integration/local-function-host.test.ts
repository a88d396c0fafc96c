/**
 * FunctionHost: Lambda execution environments as worker threads, on a tiny CommonJS handler
 * that lives inside this `"type": "module"` project (as cdk.out does): loading, isolation of
 * `process.env`, warm reuse, timeouts, crashes, missing handlers, and the pool limit.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { FunctionHost, type HostedFunction } from '../../lib/local/function-host.ts';
import { waitFor } from '../factories/wait-for.ts';

const ASSET = fileURLToPath(new URL('../fixtures/local/handlers/basic', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const fn = (overrides: Partial<HostedFunction> = {}): HostedFunction => ({
  logicalId: 'BasicFn',
  name: 'Stack-BasicFn',
  arn: 'arn:aws:lambda:us-east-1:000000000000:function:Stack-BasicFn',
  handler: 'index.handler',
  assetDir: ASSET,
  // Long enough that no invocation of the tests outlasts it on a loaded machine (those testing the
  // timeout set their own).
  timeoutSeconds: 30,
  memorySizeMb: 128,
  ...overrides,
});

const hosts: FunctionHost[] = [];
function host(
  options: {
    fn?: HostedFunction;
    env?: Record<string, string>;
    maxEnvironments?: number;
    initTimeoutMs?: number;
    prewarm?: boolean;
  } = {},
) {
  const h = new FunctionHost({
    fn: options.fn ?? fn(),
    env: options.env ?? { FIXTURE_VALUE: 'one' },
    projectRoot: ROOT,
    maxEnvironments: options.maxEnvironments ?? 1,
    ...(options.initTimeoutMs === undefined ? {} : { initTimeoutMs: options.initTimeoutMs }),
    ...(options.prewarm === undefined ? {} : { prewarm: options.prewarm }),
  });
  hosts.push(h);
  return h;
}

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
});

describe('FunctionHost', () => {
  it('loads a CommonJS bundle inside an ES module project and reuses the warm environment', async () => {
    process.env.SQS_JOBS_LEAK_CHECK = 'host only';
    try {
      const h = host();
      const first = await h.invoke({}, 'req-1');
      const second = await h.invoke({}, 'req-2');
      expect(first).toMatchObject({
        kind: 'success',
        coldStart: true,
        payload: {
          value: 'one',
          leak: null,
          invocations: 1,
          functionName: 'Stack-BasicFn',
          awsRequestId: 'req-1',
          moduleType: 'commonjs',
        },
      });
      expect(second).toMatchObject({ kind: 'success', coldStart: false, payload: { invocations: 2 } });
      const remaining = first.kind === 'success' ? (first.payload as { remainingMs: number }).remainingMs : 0;
      expect(remaining).toBeGreaterThan(15_000);
      expect(remaining).toBeLessThanOrEqual(30_000);
    } finally {
      delete process.env.SQS_JOBS_LEAK_CHECK;
    }
  });

  it('gives two functions two environments', async () => {
    const [a, b] = [host({ env: { FIXTURE_VALUE: 'a' } }), host({ env: { FIXTURE_VALUE: 'b' } })];
    const [ra, rb] = await Promise.all([a.invoke({}), b.invoke({})]);
    expect(
      [ra, rb].map((r) => (r.kind === 'success' ? (r.payload as { value: string }).value : r.kind)),
    ).toEqual(['a', 'b']);
  });

  it('reports a thrown error, and keeps the environment', async () => {
    const h = host();
    const failed = await h.invoke({ throw: 'bad input' });
    expect(failed).toMatchObject({
      kind: 'error',
      error: { errorType: 'TypeError', errorMessage: 'bad input' },
    });
    expect(await h.invoke({})).toMatchObject({ kind: 'success', payload: { invocations: 2 } });
  });

  it('times out an invocation past the function timeout and discards its environment', async () => {
    const h = host({ fn: fn({ timeoutSeconds: 1 }) });
    // The handler would sleep past the test's own timeout: only the host's timeout can end it.
    const timedOut = await h.invoke({ sleepMs: 600_000 });
    expect(timedOut).toMatchObject({ kind: 'timeout' });
    // Counted from the start of the invocation (after the init): not before the Timeout.
    expect(timedOut.durationMs).toBeGreaterThanOrEqual(1_000 - 10); // Date.now() vs timer rounding
    expect(h.environmentsDiscarded).toBe(1);
    expect(await h.invoke({})).toMatchObject({
      kind: 'success',
      coldStart: true,
      payload: { invocations: 1 },
    });
    expect(h.environmentsCreated).toBe(2);
  });

  // Lambda Developer Guide, "Understanding the Lambda execution environment lifecycle", Init phase.
  // The on-demand limit is 300 ms here instead of 10 s; the init lasts 1 s (more on a loaded machine).
  it('retries an on-demand init past its limit within the first invocation, whose timeout counts from the limit', async () => {
    const h = host({ fn: fn({ timeoutSeconds: 10 }), env: { FIXTURE_INIT_MS: '1000' }, initTimeoutMs: 300 });
    const first = await h.invoke({});
    expect(first).toMatchObject({ kind: 'success', coldStart: true });
    // The 700 ms (at least) of init past the limit came out of the invocation's 10 s.
    const remaining = first.kind === 'success' ? (first.payload as { remainingMs: number }).remainingMs : 0;
    expect(remaining).toBeLessThanOrEqual(9_300);
    expect(await h.invoke({})).toMatchObject({
      kind: 'success',
      coldStart: false,
      payload: { invocations: 2 },
    });
    expect(h.environmentsCreated).toBe(1);
  });

  it('fails the invocation with Runtime.InitTimeout when the retried init outlasts the function timeout too', async () => {
    const h = host({ fn: fn({ timeoutSeconds: 1 }), env: { FIXTURE_INIT_MS: '3000' }, initTimeoutMs: 300 });
    expect(await h.invoke({})).toMatchObject({
      kind: 'error',
      coldStart: true,
      error: {
        errorType: 'Runtime.InitTimeout',
        errorMessage: 'init phase exceeded 300 ms, and its retry the function timeout (1000 ms)',
      },
    });
  });

  it('gives prewarmed environments the provisioned-concurrency init limit (130 s), not the on-demand one', async () => {
    const h = host({ env: { FIXTURE_INIT_MS: '1000' }, initTimeoutMs: 300, prewarm: true });
    await h.warmUp();
    expect(await h.invoke({})).toMatchObject({
      kind: 'success',
      coldStart: false,
      payload: { invocations: 1 },
    });
  });

  it('replaces an environment that crashed after answering', async () => {
    const h = host();
    expect((await h.invoke({ exitAsync: true })).kind).toBe('success');
    // The crash comes after the answer: the host discards the environment when it hears of it.
    await waitFor(
      () => h.environmentsDiscarded,
      (n) => n === 1,
    );
    expect(await h.invoke({})).toMatchObject({ kind: 'success', payload: { invocations: 1 } });
    expect(h.environmentsCreated).toBe(2);
    expect(h.environmentsDiscarded).toBe(1);
  });

  it('fails every invocation when the handler is not exported', async () => {
    const h = host({ fn: fn({ handler: 'index.missing' }) });
    expect(await h.invoke({})).toMatchObject({
      kind: 'error',
      error: { errorType: 'Runtime.HandlerNotFound' },
    });
    const missingModule = host({ fn: fn({ handler: 'nowhere.handler' }) });
    expect(await missingModule.invoke({})).toMatchObject({
      kind: 'error',
      error: { errorType: 'Runtime.ImportModuleError' },
    });
  });

  it('runs at most maxEnvironments invocations at once', async () => {
    const h = host({ maxEnvironments: 2 });
    const started = Date.now();
    const results = await Promise.all([1, 2, 3].map(() => h.invoke({ sleepMs: 300 })));
    expect(results.every((r) => r.kind === 'success')).toBe(true);
    expect(h.environmentsCreated).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
  });
});
