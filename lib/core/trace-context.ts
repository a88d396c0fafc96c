/**
 * W3C Trace Context in the job envelope (CloudEvents Distributed Tracing extension: the
 * attributes `traceparent` and `tracestate`, carried as W3C Trace Context level 1 defines the
 * headers, https://www.w3.org/TR/trace-context/ §3.2 and §3.3).
 *
 * `traceparent` is `version-traceid-parentid-flags`: 2, 32, 16 and 2 lowercase hex digits joined
 * by `-` (55 characters in version `00`). Version `ff` is invalid; an all-zero trace id or parent
 * id is invalid. A version above `00` may carry more after a further `-` (§3.2.4: parse the first
 * four fields as version `00`); what this library writes is always version `00`.
 *
 * The check is one pass over the characters with a lookup table, not a regular expression: it
 * runs on every record that carries a traceparent (issue 10 keeps the envelope check cheap).
 */
import { randomBytes } from 'node:crypto';
import { shownValue } from './shown-value.ts';

/** Length of a version `00` traceparent. */
export const TRACEPARENT_LENGTH = 55;
/** Longest `tracestate` accepted (W3C: vendors should propagate at least 512 characters). */
export const MAX_TRACESTATE_CHARS = 512;

/** 0-9 or a-f (lowercase only: W3C Trace Context §3.2.2). */
function isLowerHex(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 102);
}

/** Whether `value[start..end)` is lowercase hex and, with `nonZero`, not all `0`. */
function hexField(value: string, start: number, end: number, nonZero: boolean): boolean {
  let zero = true;
  for (let i = start; i < end; i++) {
    const code = value.charCodeAt(i);
    if (!isLowerHex(code)) return false;
    if (code !== 48) zero = false;
  }
  return !(nonZero && zero);
}

/** 1 for the char codes of 0-9 and a-f. */
const LOWER_HEX = new Uint8Array(128);
for (const digit of '0123456789abcdef') LOWER_HEX[digit.charCodeAt(0)] = 1;

/**
 * Whether a traceparent is valid, in one pass over its first 55 characters: the check of every
 * record that carries one (about 200 ns; {@link traceparentProblem} says what is wrong only when
 * this says no).
 */
export function isValidTraceparent(value: string): boolean {
  const length = value.length;
  if (length < TRACEPARENT_LENGTH) return false;
  let traceBits = 0;
  let parentBits = 0;
  for (let i = 0; i < TRACEPARENT_LENGTH; i++) {
    const code = value.charCodeAt(i);
    if (i === 2 || i === 35 || i === 52) {
      if (code !== 45) return false;
    } else if (code > 127 || LOWER_HEX[code] === 0) {
      return false;
    } else if (i > 2 && i < 35) {
      traceBits |= code ^ 48;
    } else if (i > 35 && i < 52) {
      parentBits |= code ^ 48;
    }
  }
  if (traceBits === 0 || parentBits === 0) return false;
  const version = value.charCodeAt(0) * 256 + value.charCodeAt(1);
  if (version === 0x6666) return false; // ff
  if (length === TRACEPARENT_LENGTH) return true;
  // Version 00 is exactly 55 characters; a later version may go on after a '-' (§3.2.4).
  return version !== 0x3030 && value.charCodeAt(TRACEPARENT_LENGTH) === 45;
}

/**
 * What is wrong with a `traceparent`, in words, or undefined when it is valid.
 * @example traceparentProblem('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') // undefined
 */
export function traceparentProblem(value: string): string | undefined {
  if (isValidTraceparent(value)) return undefined;
  const shape =
    'must be a W3C traceparent: version-traceid-parentid-flags, 2-32-16-2 lowercase hex digits (e.g. 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01)';
  if (value.length < TRACEPARENT_LENGTH) return `${shape}, got ${shownValue(value)}`;
  if (value.charCodeAt(2) !== 45 || value.charCodeAt(35) !== 45 || value.charCodeAt(52) !== 45) {
    return `${shape}, got ${shownValue(value)}`;
  }
  if (!hexField(value, 0, 2, false)) return `${shape}: the version is not 2 lowercase hex digits`;
  if (value.startsWith('ff')) return 'must be a W3C traceparent: version ff is invalid';
  if (value.length > TRACEPARENT_LENGTH) {
    // Version 00 is exactly 55 characters; a later version may go on after a '-' (§3.2.4).
    if (value.startsWith('00')) return `${shape}: version 00 has exactly 55 characters, got ${value.length}`;
    if (value.charCodeAt(TRACEPARENT_LENGTH) !== 45) return `${shape}, got ${shownValue(value)}`;
  }
  if (!hexField(value, 3, 35, false)) return `${shape}: the trace id is not 32 lowercase hex digits`;
  if (!hexField(value, 3, 35, true)) return 'must be a W3C traceparent: an all-zero trace id is invalid';
  if (!hexField(value, 36, 52, false)) return `${shape}: the parent id is not 16 lowercase hex digits`;
  if (!hexField(value, 36, 52, true)) return 'must be a W3C traceparent: an all-zero parent id is invalid';
  if (!hexField(value, 53, 55, false)) return `${shape}: the flags are not 2 lowercase hex digits`;
  return `${shape}, got ${shownValue(value)}`;
}

/**
 * What is wrong with a `tracestate`, or undefined: 1–512 printable ASCII characters (W3C §3.3:
 * list members `key=value` separated by commas; this check keeps to the character set and size).
 */
export function tracestateProblem(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_TRACESTATE_CHARS) {
    return `must be a W3C tracestate of 1-${MAX_TRACESTATE_CHARS} characters, got ${value.length}`;
  }
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) {
      return 'must be a W3C tracestate: printable ASCII list members key=value separated by commas';
    }
  }
  return undefined;
}

/** The trace id (32 hex digits) of a valid traceparent. */
export function traceIdOf(traceparent: string): string {
  return traceparent.slice(3, 35);
}

/** The parent id (16 hex digits: the span of the sender) of a valid traceparent. */
export function parentSpanIdOf(traceparent: string): string {
  return traceparent.slice(36, 52);
}

/** The flags (2 hex digits; `01` = sampled) of a valid traceparent. */
export function traceFlagsOf(traceparent: string): string {
  return traceparent.slice(53, 55);
}

/** `hex` unless it is all zeros (invalid in W3C); then the same with its last digit `1`. */
function nonZeroHex(hex: string): string {
  for (let i = 0; i < hex.length; i++) if (hex.charCodeAt(i) !== 48) return hex;
  return `${hex.slice(0, -1)}1`;
}

/** A version 00 traceparent of these parts (lowercase hex; all-zero ids are replaced by valid ones). */
export function formatTraceparent(traceId: string, spanId: string, flags: string): string {
  return `00-${nonZeroHex(traceId)}-${nonZeroHex(spanId)}-${flags}`;
}

/**
 * A new trace: random trace id and parent id, flags `00` (not sampled: nothing was recorded
 * for it, W3C §3.2.2.5). What `JobClient` writes for a job sent without a traceparent.
 */
export function newTraceparent(): string {
  const hex = randomBytes(24).toString('hex');
  return formatTraceparent(hex.slice(0, 32), hex.slice(32, 48), '00');
}

/**
 * The traceparent of a child job: the parent's trace id and flags with a new parent id of its
 * own (`spanId`), so a chain is one trace. A parent without a traceparent starts one: trace id
 * `traceIdSeed` (derived from the parent's identity, so a re-run makes the same trace).
 * The version is always written as `00`.
 */
export function childTraceparent(
  parent: string | undefined,
  spanId: string,
  traceIdSeed: () => string,
): string {
  if (parent === undefined) return formatTraceparent(traceIdSeed(), spanId, '00');
  return formatTraceparent(traceIdOf(parent), spanId, traceFlagsOf(parent));
}
