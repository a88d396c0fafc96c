/**
 * The X-Ray trace header a child job carries, so that Lambda's recursive loop detection counts
 * each chain of jobs on its own [invocation-recursion].
 *
 * Lambda gives a whole batch one trace header (`_X_AMZN_TRACE_ID`), and the AWS SDK copies it,
 * `Lineage` included, into every request the invocation makes. Left to that, every child sent
 * during an invocation would carry the count of the longest chain in its batch: on a busy FIFO
 * queue unrelated users' chains add up, generation after generation, until Lambda stops a
 * three-step chain as "invocation 17". So the worker sets each child's `AWSTraceHeader` itself
 * (the SendMessage system attribute, which SQS takes over the request's `X-Amzn-Trace-Id`
 * [SendMessage API, MessageSystemAttributes]) from its own parent record's header:
 *
 * - `Lineage`: the parent record's, plus the invocation Lambda counted. The entries Lambda raised
 *   for this invocation are those of the invocation's `Lineage` above every record's count of
 *   the same function; each is written as the parent record's count plus one. Entries that came
 *   from other records of the batch stay out. A three-step chain counts three, under any load.
 * - `Root`, `Parent`, `Sampled`: the invocation's, so the child stays in the X-Ray trace the
 *   invocation records (lib/runtime/tracing.ts).
 * - When the invocation's header raised no entry the worker can recognise (Lambda's encoding of
 *   `Lineage` is internal and may change), the child carries the invocation's header as it is:
 *   what the SDK would send anyway, so Lambda's guard is never weaker than without sqs-jobs.
 *   Without an invocation header (outside Lambda) no header is set.
 *
 * - invocation-recursion: https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html
 * - SendMessage API: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
 */
import type { SQSRecord } from 'aws-lambda';
import {
  formatLineage,
  formatTraceHeader,
  lineageEntries,
  parseTraceHeader,
  type TraceHeader,
} from '../core/aws-trace-header.ts';

/** What the invocation raised, worked out once per invocation (at its first child). */
interface InvocationLineage {
  readonly header: TraceHeader;
  /** The invocation's header as Lambda gave it. */
  readonly text: string;
  /** Function keys Lambda raised for this invocation; empty when none could be recognised. */
  readonly raised: readonly string[];
}

/** The trace headers of the children of one invocation's records. */
export class ChainTraceHeaders {
  readonly #invocationHeader: () => string | undefined;
  readonly #records: readonly SQSRecord[];
  #invocation: InvocationLineage | null | undefined;

  /**
   * @param invocationHeader the invocation's `_X_AMZN_TRACE_ID` (read when the first child is sent).
   * @param records the invocation's records (their `attributes.AWSTraceHeader`).
   */
  constructor(invocationHeader: () => string | undefined, records: readonly SQSRecord[]) {
    this.#invocationHeader = invocationHeader;
    this.#records = records;
  }

  /** The `AWSTraceHeader` for the children of `record`; undefined outside Lambda (no header). */
  childHeaderOf(record: SQSRecord): string | undefined {
    const invocation = this.#lineage();
    if (invocation === null) return undefined;
    if (invocation.raised.length === 0) return invocation.text;
    const own = lineageEntries(parseTraceHeader(record.attributes?.AWSTraceHeader)?.lineage);
    for (const key of invocation.raised) own.set(key, (own.get(key) ?? 0) + 1);
    return formatTraceHeader({ ...invocation.header, lineage: formatLineage(own) });
  }

  #lineage(): InvocationLineage | null {
    if (this.#invocation !== undefined) return this.#invocation;
    const text = this.#invocationHeader();
    const header = parseTraceHeader(text);
    if (text === undefined || header === undefined) {
      this.#invocation = null;
      return null;
    }
    // The most any record's chain had invoked each function before this invocation.
    const highest = new Map<string, number>();
    for (const record of this.#records) {
      const entries = lineageEntries(parseTraceHeader(record.attributes?.AWSTraceHeader)?.lineage);
      for (const [key, count] of entries) highest.set(key, Math.max(highest.get(key) ?? 0, count));
    }
    const raised: string[] = [];
    for (const [key, count] of lineageEntries(header.lineage)) {
      if (count > (highest.get(key) ?? 0)) raised.push(key);
    }
    this.#invocation = { header, text, raised };
    return this.#invocation;
  }
}
