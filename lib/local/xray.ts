/**
 * The X-Ray trace header of local invocations and Lambda's recursive loop detection, emulated.
 *
 * Lambda sets `_X_AMZN_TRACE_ID` for every invocation (`Root`, `Parent`, `Sampled`, and the
 * `Lineage` it counts recursion with), whether or not the function has active tracing. The AWS
 * SDK's recursion-detection middleware copies it into the `X-Amzn-Trace-Id` header of the
 * function's requests, and SQS keeps it with each message sent as the `AWSTraceHeader` system
 * attribute, which the event source mapping hands to the next invocation. When a function is
 * invoked approximately 16 times in the same chain of requests and its `RecursiveLoop` is
 * `Terminate` (the default), Lambda stops the next invocation of that chain: it returns a
 * `RecursiveInvocationException` to the event source mapping, which raises the message's receive
 * count; the message comes back after its visibility timeout, is stopped again, until SQS moves
 * it to the queue's DLQ after `maxReceiveCount` receives [invocation-recursion].
 *
 * Here: `Lineage` is written `<function hash>:<invocations>` per function of the chain, joined
 * by `|` (the shape of the X-Ray docs' example; Lambda's own encoding is internal and may differ;
 * lib/core/aws-trace-header.ts reads it). What the emulation assumes of Lambda, which AWS does not
 * document: an invocation's header continues the record of its batch whose chain has invoked the
 * function most, with the function counted once more; and the stop rule applies to each record
 * on its own header. A record whose header shows that this function already ran
 * {@link RECURSION_STOP_INVOCATIONS} times in its chain is not delivered when the function's
 * `RecursiveLoop` is not `Allow`: 16 invocations of a chain run, the 17th is stopped. The worker
 * does not rely on which record Lambda continues: it writes each child's header from its own
 * parent record's (lib/runtime/chain-trace.ts). Nothing in a job's data or envelope counts (the
 * envelope's `traceparent` and lineage are separate).
 *
 * - invocation-recursion: https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html
 * - xray-concepts-tracingheader: https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  formatTraceHeader,
  lineageCount,
  parseTraceHeader,
  type TraceHeader,
  withLineageCount,
} from '../core/aws-trace-header.ts';

/** Invocations of one function a chain may make before Lambda stops the next ("approximately 16"). */
export const RECURSION_STOP_INVOCATIONS = 16;

/** A new X-Ray trace id: `1-<epoch seconds, 8 hex>-<96 random bits, 24 hex>`. */
export function newTraceId(nowMs: number = Date.now()): string {
  const epoch = Math.floor(nowMs / 1000)
    .toString(16)
    .padStart(8, '0');
  return `1-${epoch}-${randomBytes(12).toString('hex')}`;
}

/** A new segment id: 64 random bits, 16 hex. */
export function newSegmentId(): string {
  return randomBytes(8).toString('hex');
}

/** The 8-hex hash naming a function in `Lineage` (of its ARN). */
export function lineageHashOf(functionArn: string): string {
  return createHash('sha256').update(functionArn).digest('hex').slice(0, 8);
}

/** What a function's mapping needs to trace and count its invocations. */
export interface FunctionTracing {
  /** `Lineage` hash of the function ({@link lineageHashOf} of its ARN). */
  readonly lineageHash: string;
  /** `RecursiveLoop` of the template: `Allow`, or `Terminate` (also when absent: Lambda's default). */
  readonly recursiveLoop: 'Allow' | 'Terminate';
  /** `TracingConfig.Mode`: `Active` samples every invocation locally; otherwise the upstream decides. */
  readonly tracingMode: 'Active' | 'PassThrough' | undefined;
}

/** One record held back by the emulated stop rule. */
export interface StoppedRecord {
  readonly messageId: string;
  /** The invocation it would have been, in its chain (RECURSION_STOP_INVOCATIONS + 1 or more). */
  readonly invocation: number;
  readonly traceHeader: string;
}

/** The trace header of one invocation, and the records the stop rule holds back. */
export interface InvocationTrace<T> {
  /** `_X_AMZN_TRACE_ID` of the invocation. */
  readonly traceHeader: string;
  /** Records to deliver, in order. */
  readonly deliver: readonly T[];
  readonly stopped: readonly StoppedRecord[];
}

/**
 * The trace of an invocation with these records, as Lambda builds it: it continues the trace of
 * the first record that carries one (its `Root`; `Sampled` from it unless tracing is `Active`,
 * where the local runtime samples every invocation), with a new `Parent`; its `Lineage` counts
 * this invocation for the function: one more than the most any delivered record shows. With
 * `RecursiveLoop` `Terminate`, a record whose chain already made {@link RECURSION_STOP_INVOCATIONS}
 * invocations of the function is held back instead.
 * @param headerOf a record's `AWSTraceHeader`, if any.
 */
export function traceInvocation<T>(
  records: readonly T[],
  headerOf: (record: T) => string | undefined,
  messageIdOf: (record: T) => string,
  fn: FunctionTracing,
  nowMs: number = Date.now(),
): InvocationTrace<T> {
  const deliver: T[] = [];
  const stopped: StoppedRecord[] = [];
  let upstream: TraceHeader | undefined;
  let lineage: string | undefined;
  let highest = 0;
  for (const record of records) {
    const header = parseTraceHeader(headerOf(record));
    const previous = lineageCount(header?.lineage, fn.lineageHash);
    if (fn.recursiveLoop !== 'Allow' && previous >= RECURSION_STOP_INVOCATIONS) {
      stopped.push({
        messageId: messageIdOf(record),
        invocation: previous + 1,
        traceHeader: headerOf(record) ?? '',
      });
      continue;
    }
    deliver.push(record);
    if (header?.root !== undefined && upstream === undefined) upstream = header;
    if (previous >= highest) {
      highest = previous;
      lineage = header?.lineage;
    }
  }
  const sampled = fn.tracingMode === 'Active' ? '1' : upstream?.sampled === '1' ? '1' : '0';
  const traceHeader = formatTraceHeader({
    root: upstream?.root ?? newTraceId(nowMs),
    parent: newSegmentId(),
    sampled,
    lineage: withLineageCount(lineage, fn.lineageHash, highest + 1),
    extra: [],
  });
  return { traceHeader, deliver, stopped };
}

/**
 * A function's tracing settings from its template properties: `RecursiveLoop` (absent:
 * Lambda's default, `Terminate`) and `TracingConfig.Mode`.
 * @param resolve resolves a property value (intrinsics) to plain data.
 */
export function functionTracingOf(
  functionArn: string,
  properties: Readonly<Record<string, unknown>>,
  resolve: (value: unknown, key: string) => unknown,
): FunctionTracing {
  const loop =
    properties.RecursiveLoop === undefined ? undefined : resolve(properties.RecursiveLoop, 'RecursiveLoop');
  const config =
    properties.TracingConfig === undefined ? undefined : resolve(properties.TracingConfig, 'TracingConfig');
  const mode = (config as { Mode?: unknown } | undefined)?.Mode;
  return {
    lineageHash: lineageHashOf(functionArn),
    recursiveLoop: loop === 'Allow' ? 'Allow' : 'Terminate',
    tracingMode: mode === 'Active' || mode === 'PassThrough' ? mode : undefined,
  };
}
