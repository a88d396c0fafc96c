/**
 * Issue 21's targets, as conditions on the rows of `npm run bench -- --cpu` / `--json`, and their
 * evaluation: each row the issue sets a target for carries `target` (the condition, in the row's
 * own field names) and `met` (whether the row's medians hold it).
 *
 * The rows are known by their `measure`: the CPU rows' names come from bench/cpu.ts
 * ({@link cpuMeasure}), the bundle, cold-start and heap rows' from bench/cold-start.ts
 * ({@link coldStartMeasure}); {@link missingTargets} tells when a run has no row of that name.
 *
 * Issue 21: CPU per record at batch 10 within 1.2× Powertools writing the same outputs and 2×
 * bare Powertools (standard and FIFO); a batch of 1 within 2× bare; heap within 1.1×; a minimal
 * worker bundled by a user within 1.3× Powertools' bytes; cold start (CPU, import and init to
 * first response) at or below Powertools'. "A minimal worker" is one worker in every target row:
 * the lean entry's (`sqs-jobs/worker`, no optional feature), the one a user minding bytes and cold
 * start bundles. The same worker from `sqs-jobs` (every feature) has rows of its own without
 * target. Wall-time cold-start rows carry no target (the issue names CPU; wall time under load
 * moves several-fold).
 */
import { coldStartMeasure } from './cold-start.ts';
import { CPU_CASES, type CpuCase, cpuMeasure } from './cpu.ts';
import type { ComparisonRow } from './vs-powertools.ts';

/** Upper limits on a row's ratios (medians): `ratio` = ours / Powertools (bare). */
export interface Limits {
  readonly ratio?: number;
  /** ours / Powertools writing the same log line and EMF (CPU rows only). */
  readonly ratioSameOutputs?: number;
}

export interface Target {
  readonly measure: string;
  readonly limits: Limits;
}

/** CPU per record: batches of 10 (standard and FIFO) and of 1; none for 1,000. */
export function cpuLimits(c: CpuCase): Limits | undefined {
  if (c.batchSize === 10) return { ratio: 2, ratioSameOutputs: 1.2 };
  if (c.batchSize === 1) return { ratio: 2 };
  return undefined;
}

/** Every row issue 21 sets a target for, by measure. */
export const ISSUE_21_TARGETS: readonly Target[] = [
  ...CPU_CASES.flatMap((c) => {
    const limits = cpuLimits(c);
    return limits === undefined ? [] : [{ measure: cpuMeasure(c), limits }];
  }),
  { measure: coldStartMeasure.bundle('lean'), limits: { ratio: 1.3 } },
  { measure: coldStartMeasure.importCpuMs('lean'), limits: { ratio: 1 } },
  { measure: coldStartMeasure.firstResponseCpuMs('lean'), limits: { ratio: 1 } },
  { measure: coldStartMeasure.heapAfter('lean'), limits: { ratio: 1.1 } },
];

const targetOf = (measure: string): Target | undefined => ISSUE_21_TARGETS.find((t) => t.measure === measure);

/** Whether issue 21 sets a target for the row named `measure`. */
export const hasIssue21Target = (measure: string): boolean => targetOf(measure) !== undefined;

/** The condition as written in the JSON, e.g. `ratio <= 2 and ratioSameOutputs <= 1.2`. */
export function describeLimits(limits: Limits): string {
  return Object.entries(limits)
    .map(([field, limit]) => `${field} <= ${limit}`)
    .join(' and ');
}

/** Whether `row` holds every limit; a limit on a field the row lacks (or is not a number) is not met. */
export function meets(row: ComparisonRow, limits: Limits): boolean {
  return Object.entries(limits).every(([field, limit]) => {
    const value = row[field as keyof Limits];
    return typeof value === 'number' && Number.isFinite(value) && value <= (limit as number);
  });
}

/**
 * `row` with `target` and `met` when issue 21 sets a target for it (replacing any it carried);
 * other rows unchanged.
 */
export function withTarget(row: ComparisonRow): ComparisonRow {
  const target = targetOf(row.measure);
  if (target === undefined) return row;
  return { ...row, target: describeLimits(target.limits), met: meets(row, target.limits) };
}

export const withTargets = (rows: readonly ComparisonRow[]): ComparisonRow[] => rows.map(withTarget);

/**
 * The measures of issue 21's targets no row of `rows` has (a run that lacks them shows nothing
 * about them), among `expected` (default: every target; a run of part of the bench, e.g.
 * `--cpu --cold-start`, passes the measures of the parts it ran).
 */
export function missingTargets(
  rows: readonly ComparisonRow[],
  expected: readonly string[] = ISSUE_21_TARGETS.map((t) => t.measure),
): string[] {
  const measures = new Set(rows.map((r) => r.measure));
  return expected.filter((m) => !measures.has(m));
}

/**
 * Whether `rows` show every target of `expected` (default: all of issue 21's) met: each has its
 * row and the row holds it.
 */
export function allTargetsMet(
  rows: readonly ComparisonRow[],
  expected: readonly string[] = ISSUE_21_TARGETS.map((t) => t.measure),
): boolean {
  return missingTargets(rows, expected).length === 0 && withTargets(rows).every((r) => r.met !== false);
}
