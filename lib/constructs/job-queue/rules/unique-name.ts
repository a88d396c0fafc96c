/**
 * One logical name per stack: the alarms, the `Queue` metric dimension of the worker metrics
 * (`SqsJobs/JobDeadLettered` and the rest), `POWERTOOLS_SERVICE_NAME` and the dashboard widgets
 * are keyed by it, so two JobQueues with one name would mix their numbers.
 */
import type { Stack } from 'aws-cdk-lib';
import { error, type JobQueueFinding } from './types.ts';

/** Names taken per stack → construct path of the JobQueue that took it. */
const takenByStack = new WeakMap<Stack, Map<string, string>>();

/** The names taken in `stack` so far, by construct path. */
export function takenNames(stack: Stack): Map<string, string> {
  let taken = takenByStack.get(stack);
  if (taken === undefined) {
    taken = new Map();
    takenByStack.set(stack, taken);
  }
  return taken;
}

/** A finding when `name` is already used by another JobQueue of the stack (`taken`: name → path). */
export function uniqueNameFindings(name: unknown, taken: ReadonlyMap<string, string>): JobQueueFinding[] {
  if (typeof name !== 'string') return [];
  const other = taken.get(name);
  if (other === undefined) return [];
  return [
    error(
      `name: '${name}' is already the name of the JobQueue at ${other} in this stack: their alarms, Queue metric dimension and dashboard widgets would mix; give each queue its own name`,
    ),
  ];
}
