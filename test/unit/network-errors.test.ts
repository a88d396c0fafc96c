/** The one list of transient network codes (lib/core/network-errors.ts) and the one cause walk (error-chain.ts). */
import { describe, expect, it } from 'vitest';
import { findInChain } from '../../lib/core/error-chain.ts';
import { classifyError } from '../../lib/core/errors.ts';
import {
  isTransientNetworkCode,
  networkErrorCode,
  TRANSIENT_NETWORK_CODES,
  UNREACHABLE_CODES,
} from '../../lib/core/network-errors.ts';

const withCode = (code: string, message = `connect ${code}`) => Object.assign(new Error(message), { code });

describe('transient network codes', () => {
  it.each(TRANSIENT_NETWORK_CODES)('%s is transient, bare and wrapped by fetch', (code) => {
    expect(isTransientNetworkCode(code)).toBe(true);
    expect(networkErrorCode(withCode(code))).toBe(code);
    expect(classifyError(withCode(code))).toEqual({ kind: 'transient', reason: code });
    const wrapped = new TypeError('fetch failed', { cause: withCode(code) });
    expect(classifyError(wrapped)).toEqual({ kind: 'transient', reason: code });
  });

  it('a plain error, another code or a non-string is not a network code', () => {
    expect(isTransientNetworkCode(undefined)).toBe(false);
    expect(isTransientNetworkCode(42)).toBe(false);
    expect(isTransientNetworkCode('ENOENT')).toBe(false);
    expect(isTransientNetworkCode('econnreset')).toBe(false);
    expect(networkErrorCode(new Error('boom'))).toBeUndefined();
    expect(networkErrorCode(withCode('ENOENT'))).toBeUndefined();
    expect(networkErrorCode('ECONNRESET')).toBeUndefined();
    expect(networkErrorCode(null)).toBeUndefined();
  });

  it('the unreachable codes are a subset of the transient ones', () => {
    for (const code of UNREACHABLE_CODES) expect(isTransientNetworkCode(code)).toBe(true);
    expect(UNREACHABLE_CODES.has('UND_ERR_BODY_TIMEOUT')).toBe(false);
    expect(networkErrorCode(withCode('UND_ERR_BODY_TIMEOUT'), UNREACHABLE_CODES)).toBeUndefined();
    expect(networkErrorCode(withCode('ECONNREFUSED'), UNREACHABLE_CODES)).toBe('ECONNREFUSED');
  });

  it('finds a code in the cause chain and in an AggregateError, down to maxDepth', () => {
    const aggregate = new AggregateError([new Error('v6'), withCode('ECONNREFUSED')], 'connect failed');
    expect(networkErrorCode(new Error('outer', { cause: aggregate }))).toBe('ECONNREFUSED');
    let deep: unknown = withCode('ETIMEDOUT');
    for (let i = 0; i < 5; i++) deep = new Error(`level ${i}`, { cause: deep });
    expect(networkErrorCode(deep)).toBe('ETIMEDOUT');
    expect(networkErrorCode(new Error('one more', { cause: deep }))).toBeUndefined();
    expect(networkErrorCode(new Error('one more', { cause: deep }), undefined, 6)).toBe('ETIMEDOUT');
  });
});

describe('findInChain', () => {
  it('visits the error, its causes depth first, then errors only when asked', () => {
    const seen: string[] = [];
    const error = Object.assign(new Error('top', { cause: new Error('cause', { cause: 'a string' }) }), {
      errors: [new Error('sibling')],
    });
    const visit = (node: object, depth: number) => {
      seen.push(`${(node as Error).message}@${depth}`);
      return undefined;
    };
    expect(findInChain(error, visit, { maxDepth: 5 })).toBeUndefined();
    expect(seen).toEqual(['top@0', 'cause@1']);
    seen.length = 0;
    findInChain(error, visit, { maxDepth: 5, aggregate: true });
    expect(seen).toEqual(['top@0', 'cause@1', 'sibling@1']);
    seen.length = 0;
    findInChain(error, visit, { maxDepth: 0, aggregate: true });
    expect(seen).toEqual(['top@0']);
  });

  it('returns the first answer and stops there', () => {
    const error = new Error('top', { cause: new Error('hit', { cause: new Error('never') }) });
    const seen: string[] = [];
    const found = findInChain(
      error,
      (node) => {
        seen.push((node as Error).message);
        return (node as Error).message === 'hit' ? 'found' : undefined;
      },
      { maxDepth: 5 },
    );
    expect(found).toBe('found');
    expect(seen).toEqual(['top', 'hit']);
  });
});
