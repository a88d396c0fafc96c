/**
 * The X-Ray trace header as SQS and Lambda carry it: `X-Amzn-Trace-Id` on a request, Lambda's
 * `_X_AMZN_TRACE_ID` for an invocation, and the `AWSTraceHeader` system attribute SQS keeps with
 * a message (`Root=...;Parent=...;Sampled=...;Lineage=...`) [xray-concepts-tracingheader].
 *
 * `Lineage` is what Lambda's recursive loop detection counts with [invocation-recursion]: an
 * entry per function of the chain, `<function key>:<invocations>`, entries joined by `|` (the
 * shape of the X-Ray docs' example). Lambda's own encoding of the key is internal: everything
 * before an entry's last `:` is taken as its key, the integer after it as its count, so a key
 * with `:` of its own (`1:a87bd80c`) reads the same.
 *
 * Shared by the worker (lib/runtime/chain-trace.ts: the header a child job carries) and the
 * local runtime's emulation of Lambda (lib/local/xray.ts).
 *
 * - xray-concepts-tracingheader: https://docs.aws.amazon.com/xray/latest/devguide/xray-concepts.html#xray-concepts-tracingheader
 * - invocation-recursion: https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html
 */

/** A parsed `X-Amzn-Trace-Id` / `_X_AMZN_TRACE_ID` / `AWSTraceHeader` value. */
export interface TraceHeader {
  readonly root: string | undefined;
  readonly parent: string | undefined;
  readonly sampled: string | undefined;
  readonly lineage: string | undefined;
  /** Other `key=value` fields, kept in order. */
  readonly extra: readonly (readonly [string, string])[];
}

/** Parses a trace header; unknown fields are kept, a field without `=` and `Self` are dropped. */
export function parseTraceHeader(text: string | undefined): TraceHeader | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let root: string | undefined;
  let parent: string | undefined;
  let sampled: string | undefined;
  let lineage: string | undefined;
  const extra: [string, string][] = [];
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 'Root') root = value;
    else if (key === 'Parent') parent = value;
    else if (key === 'Sampled') sampled = value;
    else if (key === 'Lineage') lineage = value;
    else if (key !== 'Self') extra.push([key, value]);
  }
  return { root, parent, sampled, lineage, extra };
}

/** Writes a trace header: `Root`, `Parent`, `Sampled`, `Lineage`, then the other fields. */
export function formatTraceHeader(header: TraceHeader): string {
  const parts: string[] = [];
  if (header.root !== undefined) parts.push(`Root=${header.root}`);
  if (header.parent !== undefined) parts.push(`Parent=${header.parent}`);
  if (header.sampled !== undefined) parts.push(`Sampled=${header.sampled}`);
  if (header.lineage !== undefined && header.lineage !== '') parts.push(`Lineage=${header.lineage}`);
  for (const [key, value] of header.extra) parts.push(`${key}=${value}`);
  return parts.join(';');
}

/**
 * The entries of a `Lineage` value, function key → invocations, in order. An entry without a
 * `:` or without a non-negative integer count is dropped.
 */
export function lineageEntries(lineage: string | undefined): Map<string, number> {
  const entries = new Map<string, number>();
  if (lineage === undefined) return entries;
  for (const entry of lineage.split('|')) {
    const colon = entry.lastIndexOf(':');
    if (colon <= 0) continue;
    const count = Number(entry.slice(colon + 1));
    if (Number.isInteger(count) && count >= 0) entries.set(entry.slice(0, colon), count);
  }
  return entries;
}

/** Writes `Lineage` entries back: `<key>:<count>` joined by `|`. */
export function formatLineage(entries: ReadonlyMap<string, number>): string {
  return [...entries].map(([key, count]) => `${key}:${count}`).join('|');
}

/** Invocations of the function `key` recorded in a `Lineage` value; 0 when it is not there. */
export function lineageCount(lineage: string | undefined, key: string): number {
  return lineageEntries(lineage).get(key) ?? 0;
}

/** `lineage` with the function `key` at `count` (added at the end when new). */
export function withLineageCount(lineage: string | undefined, key: string, count: number): string {
  const entries = lineageEntries(lineage);
  entries.set(key, count);
  return formatLineage(entries);
}

/**
 * Whether SQS takes `value` as an `AWSTraceHeader` system attribute: a string of printable ASCII
 * with a `Root` field ("a correctly formatted X-Ray trace header string", SendMessage API,
 * MessageSystemAttributes).
 */
export function isSendableTraceHeader(value: unknown): value is string {
  return (
    typeof value === 'string' && /^[\x20-\x7e]+$/.test(value) && parseTraceHeader(value)?.root !== undefined
  );
}
