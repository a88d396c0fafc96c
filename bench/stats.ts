/**
 * The bench's summary statistics: medians with their spread, and the ratio of two sides taken
 * round by round (bench/cpu.ts, bench/cold-start.ts, bench/wide-batch.ts, bench/vs-powertools.ts).
 *
 * Why per-round ratios: in round `i` both sides ran in fresh processes one right after the other,
 * so a busy or quiet stretch of the machine (other work, CPU frequency, a neighbour's cache use)
 * weighs on both; their ratio cancels it, where the ratio of the two sides' medians compares
 * processes minutes apart. The median of those ratios then drops the odd round in which one
 * process alone was disturbed.
 */

/** The median of `values` (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The smallest and largest of `values`, [min, max]. */
export const spread = (values: readonly number[]): [number, number] => [
  Math.min(...values),
  Math.max(...values),
];

/**
 * `ours[i] / theirs[i]` for each round `i`: the two lists hold one figure per round, in the order
 * of the rounds. Throws when their lengths differ (a round lost on one side would pair every later
 * round with the wrong one).
 */
export function roundRatios(ours: readonly number[], theirs: readonly number[]): number[] {
  if (ours.length !== theirs.length) {
    throw new Error(
      `roundRatios: ${ours.length} figures against ${theirs.length}; both sides need one per round`,
    );
  }
  return ours.map((value, i) => value / (theirs[i] as number));
}
