/**
 * A Powertools Logger given to `createWorker` gets each invocation's Lambda context through
 * lib/runtime/logger-context.ts instead of Powertools' `injectLambdaContext` middleware (so no
 * worker bundle holds the Logger package, issue 21): the same lines, keys appended during an
 * invocation reset after it, on success and on error, and the same cleanup left for another
 * Powertools middleware that returns early.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj } from '@middy/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { powertoolsLoggerContext } from '../../lib/runtime/logger-context.ts';
import { lambdaContext } from '../factories/sqs.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Two invocations, one ending well and one failing, each appending a key; everything written. */
async function drive(
  middleware: (logger: Logger) => MiddlewareObj,
): Promise<{ lines: string[]; cleanups: unknown[] }> {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-12-01T10:20:30.456Z') });
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  const logger = new Logger({ serviceName: 'sqs-jobs-orders' });
  const hooks = middleware(logger);
  const cleanups: unknown[] = [];
  for (const [i, ending] of (['after', 'onError'] as const).entries()) {
    const request = {
      event: { Records: [] },
      context: { ...lambdaContext(), awsRequestId: `request-${i}` },
      internal: {} as Record<string, unknown>,
      response: undefined,
      error: ending === 'onError' ? new Error('boom') : undefined,
    };
    await hooks.before?.(request as never);
    cleanups.push(typeof request.internal['powertools-for-aws.logger']);
    logger.info('before the end', { i });
    logger.appendKeys({ tenant: `tenant-${i}` });
    logger.info('with the key');
    await hooks[ending]?.(request as never);
    logger.info('after the end');
  }
  return { lines, cleanups };
}

describe('powertoolsLoggerContext', () => {
  it('does what injectLambdaContext(logger, { resetKeys: true }) does, line for line', async () => {
    const ours = await drive((logger) => powertoolsLoggerContext(logger));
    vi.restoreAllMocks();
    const theirs = await drive((logger) => injectLambdaContext(logger, { resetKeys: true }));
    expect(ours.lines).toEqual(theirs.lines);
    expect(ours.cleanups).toEqual(['function', 'function']);
    expect(theirs.cleanups).toEqual(ours.cleanups);
    // The context is each invocation's, and an appended key lives until the invocation ends.
    expect(ours.lines[1]).toContain(
      '"function_request_id":"request-0","sampling_rate":0,"tenant":"tenant-0"',
    );
    expect(ours.lines[2]).not.toContain('tenant');
    expect(ours.lines[4]).toContain('"tenant":"tenant-1"');
    expect(ours.lines[5]).not.toContain('tenant');
  });
});
