/**
 * The report of a local run (`npm start`, `npm run soak`): a pure function from the facts
 * collected after the run (facts.ts) to a report object (build.ts, run-report.ts), with the
 * invariants the run must hold (invariants.ts), and a text renderer (render.ts). Nothing here
 * does I/O, so every figure and every invariant is unit-tested on hand-made facts.
 */
export { buildReport } from './build.ts';
export { type DeadLetterJob, deadLetterJobOf, describeDeadLetterJob } from './dead-letters.ts';
export type { DeadLetterFact, JobOutcome, JobState, ReportFacts } from './facts.ts';
export type { InvariantResult } from './invariants.ts';
export { type LatencySummary, percentile, summariseLatency } from './latency.ts';
export { findOrderViolations, type OrderViolation } from './order.ts';
export { renderReport, unfinishedMessage } from './render.ts';
export type { RunReport } from './run-report.ts';
export {
  type FiringFact,
  type HoldFact,
  type JobRunFact,
  type NightlyBacklogFact,
  type ScheduleFacts,
  type ScheduleSummary,
  scheduleInvariants,
  summariseSchedules,
} from './schedules.ts';
