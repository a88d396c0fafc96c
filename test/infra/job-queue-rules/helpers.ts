/**
 * Helpers of the JobQueue rule tests: each rule is a pure function of the props (defaults
 * applied), so these tests call it directly: no App, no synth, no bundling.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobQueueProps } from '../../../lib/constructs/job-queue/props.ts';
import { ruleInput } from '../../../lib/constructs/job-queue/rules/index.ts';
import type { JobQueueRule } from '../../../lib/constructs/job-queue/rules/types.ts';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FIXTURE_ENTRY = 'test/fixtures/worker-handler.ts';

/** A queue every rule accepts without a finding. */
export const VALID: JobQueueProps = {
  name: 'jobs',
  entry: FIXTURE_ENTRY,
  projectRoot: PROJECT_ROOT,
  maxAttempts: 5,
  jobTimeoutSeconds: 10,
  idempotencyTable: false,
  alarmTopic: false,
};

/** Props as a JavaScript caller may pass them: anything goes. */
export type LooseProps = Partial<Record<keyof JobQueueProps, unknown>>;

/** {@link VALID} with `overrides` applied; a key set to `undefined` is removed, as if left out. */
export function props(overrides: LooseProps = {}): JobQueueProps {
  const merged: Record<string, unknown> = { ...VALID, ...overrides };
  for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete merged[k];
  return merged as unknown as JobQueueProps;
}

/** The error lines of `rule` for {@link props}(overrides). */
export function errors(rule: JobQueueRule, overrides: LooseProps = {}): string[] {
  return rule(ruleInput(props(overrides))).flatMap((f) => (f.level === 'error' ? [f.message] : []));
}

/** The warnings (`id: message`) of `rule` for {@link props}(overrides). */
export function warnings(rule: JobQueueRule, overrides: LooseProps = {}): string[] {
  return rule(ruleInput(props(overrides))).flatMap((f) =>
    f.level === 'warning' ? [`${f.id}: ${f.message}`] : [],
  );
}
