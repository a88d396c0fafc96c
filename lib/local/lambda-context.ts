/**
 * A Lambda-like `Context` object for one invocation (Lambda Developer Guide, "Using the Lambda
 * context object to retrieve Node.js function information"). Runs inside the function's worker
 * thread, so it imports nothing but types.
 */
import type { Context } from 'aws-lambda';

/** What the context is built from; plain data so it can cross a thread boundary. */
export interface LambdaContextInput {
  readonly functionName: string;
  /** @default '$LATEST' */
  readonly functionVersion?: string;
  readonly invokedFunctionArn: string;
  /** Configured memory in MB (the template's `MemorySize`, default 128). */
  readonly memorySizeMb: number;
  /** Request id of this invocation (a UUID). */
  readonly awsRequestId: string;
  /** @default `/aws/lambda/<functionName>` */
  readonly logGroupName?: string;
  readonly logStreamName: string;
  /** Epoch milliseconds when the invocation times out (start + the function's `Timeout`). */
  readonly deadlineMs: number;
}

/**
 * Builds the context: `getRemainingTimeInMillis()` counts down to `deadlineMs` (never below 0).
 * The deprecated `done` / `fail` / `succeed` throw, as callback-style handlers do not exist on
 * `nodejs24.x`.
 */
export function createLambdaContext(input: LambdaContextInput, now: () => number = Date.now): Context {
  const unsupported = (name: string) => () => {
    throw new Error(`context.${name}() is not supported on nodejs24.x: return a value or a promise`);
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: input.functionName,
    functionVersion: input.functionVersion ?? '$LATEST',
    invokedFunctionArn: input.invokedFunctionArn,
    memoryLimitInMB: String(input.memorySizeMb),
    awsRequestId: input.awsRequestId,
    logGroupName: input.logGroupName ?? `/aws/lambda/${input.functionName}`,
    logStreamName: input.logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, input.deadlineMs - now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
}
