/**
 * The stage of a message that needs a feature the worker was built without (lib/runtime/features/):
 * dead-lettered at once with a MissingFeatureError as evidence, never run without the guarantee
 * the feature gives (a batch child uncounted, a cancelled job run). Permanent, so no attempt is
 * spent on retries that would fail the same way; redriven after a redeploy with the feature, it runs.
 */
import { alsoMissing, type FeatureName, MissingFeatureError } from '../features/feature.ts';
import { deadLetter } from './dead-lettering.ts';
import type { AnyJob } from './deps.ts';
import type { RecordOutcome } from './outcome.ts';
import type { RecordRun } from './record-run.ts';

/**
 * Dead-letters the record for the missing `feature`.
 * @param needs what the message is, as the evidence names it (`a batch child (batchid)`).
 */
export function deadLetterMissingFeature(
  run: RecordRun,
  feature: FeatureName,
  needs: string,
  job: AnyJob | undefined,
): Promise<RecordOutcome> {
  const error = new MissingFeatureError(feature, needs, true, alsoMissing(feature, run.deps.features));
  return deadLetter(run, { error, reason: error.name, attempts: run.receiveCount, job });
}
