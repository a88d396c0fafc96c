/**
 * Splitting a list into SendMessageBatch-sized requests: at most `maxEntries` items and at most
 * `maxBytes` in total per request, order kept (SendMessageBatch API reference: 10 entries, and
 * the sum of the message sizes within the 1 MiB message limit).
 */

/** Limits of one request. */
export interface ChunkLimits {
  /** Most items per chunk (10 for SendMessageBatch). */
  readonly maxEntries: number;
  /** Most bytes per chunk, summed over its items. */
  readonly maxBytes: number;
}

/**
 * Splits `items` greedily, in order, into chunks within `limits`. An item larger than
 * `maxBytes` on its own gets a chunk of its own (callers refuse such items before sending).
 *
 * @param sizeOf size of an item in bytes.
 * @returns chunks whose concatenation is `items`; none is empty.
 */
export function chunkByCountAndBytes<T>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  limits: ChunkLimits,
): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let currentBytes = 0;
  for (const item of items) {
    const bytes = sizeOf(item);
    if (
      current.length > 0 &&
      (current.length >= limits.maxEntries || currentBytes + bytes > limits.maxBytes)
    ) {
      chunks.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(item);
    currentBytes += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
