/**
 * The worker's memory (`memorySizeMb`, which also scales its CPU): a whole number of MB from 128 to
 * 10,240. Lambda refuses anything else only at deploy (CloudFormation's validator merely warns
 * about a fraction), so it is refused here, at synth.
 * Source (configuration-memory): https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html
 */
import { LIMITS } from '../defaults.ts';
import { describeValue, isKnownNumber } from '../values.ts';
import { error, type JobQueueRule } from './types.ts';

export const memoryRule: JobQueueRule = ({ props }) => {
  const mb: unknown = props.memorySizeMb;
  if (mb === undefined) return [];
  if (typeof mb !== 'number') {
    return [error(`memorySizeMb: must be a number of MB, got ${describeValue(mb)}`)];
  }
  if (!isKnownNumber(mb)) return [];
  if (Number.isInteger(mb) && mb >= LIMITS.minMemorySizeMb && mb <= LIMITS.maxMemorySizeMb) return [];
  return [
    error(
      `memorySizeMb: ${mb} must be a whole number of MB from ${LIMITS.minMemorySizeMb} to ${LIMITS.maxMemorySizeMb.toLocaleString('en-US')}, what Lambda accepts (1-MB steps) [configuration-memory]`,
    ),
  ];
};
