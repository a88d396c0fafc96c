/**
 * Names of enqueue targets: logical queue names, so `JOBS_QUEUE_URL_<NAME>` maps back to them
 * (docs/contracts.md, "Environment of a worker Lambda").
 */
import { NAME_PATTERN } from '../defaults.ts';
import { error, type JobQueueRule } from './types.ts';

export const enqueueTargetsRule: JobQueueRule = ({ props }) =>
  Object.keys(props.enqueueTargets ?? {})
    .filter((target) => !NAME_PATTERN.test(target))
    .map((target) =>
      error(`enqueueTargets: '${target}' is not a valid logical queue name (lowercase letters, digits, '-')`),
    );
