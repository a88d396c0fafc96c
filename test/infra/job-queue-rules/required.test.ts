/** Rule group `required`: name, entry, maxAttempts, jobTimeoutSeconds. */
import { describe, expect, it } from 'vitest';
import { requiredRule } from '../../../lib/constructs/job-queue/rules/required.ts';
import { errors } from './helpers.ts';

describe('required rule', () => {
  it('accepts a valid queue', () => {
    expect(errors(requiredRule)).toEqual([]);
  });

  it('one line per missing prop, naming it', () => {
    expect(errors(requiredRule, { name: undefined })).toEqual([
      "name: required: the logical queue name, e.g. 'payments'",
    ]);
    expect(errors(requiredRule, { entry: undefined })).toEqual([
      "entry: required: the path of the worker's entry file, e.g. 'functions/payments.ts'",
    ]);
    expect(errors(requiredRule, { maxAttempts: undefined })).toEqual([
      "maxAttempts: required unless jobs are given: the highest retry.maxAttempts among the worker's jobs",
    ]);
    expect(errors(requiredRule, { jobTimeoutSeconds: undefined })).toEqual([
      "jobTimeoutSeconds: required unless jobs are given: the highest timeoutSeconds among the worker's jobs, in seconds",
    ]);
  });

  it('maxAttempts and jobTimeoutSeconds are not required when jobs are given', () => {
    expect(errors(requiredRule, { maxAttempts: undefined, jobTimeoutSeconds: undefined, jobs: [] })).toEqual(
      [],
    );
  });

  it('wrong types are named, not shown as NaN', () => {
    expect(errors(requiredRule, { name: 7, entry: {}, maxAttempts: '5', jobTimeoutSeconds: null })).toEqual([
      'name: must be a string, got number 7',
      'entry: must be a path string, got object',
      "maxAttempts: must be a number, got string '5'",
      'jobTimeoutSeconds: must be a number, got null',
    ]);
  });

  it('malformed values keep their messages', () => {
    expect(errors(requiredRule, { name: '9 lives' })).toEqual([
      "name: '9 lives' must start with a lowercase letter and contain only lowercase letters, digits and '-' (at most 40 characters)",
    ]);
    expect(errors(requiredRule, { name: 'a'.repeat(41) })).toHaveLength(1);
    expect(errors(requiredRule, { maxAttempts: 0 })).toEqual([
      'maxAttempts: 0 must be a whole number of at least 1',
    ]);
    expect(errors(requiredRule, { maxAttempts: 2.5 })).toEqual([
      'maxAttempts: 2.5 must be a whole number of at least 1',
    ]);
    expect(errors(requiredRule, { jobTimeoutSeconds: 0 })).toEqual(['jobTimeoutSeconds: 0 must be above 0']);
    expect(errors(requiredRule, { jobTimeoutSeconds: Number.NaN })).toEqual([
      'jobTimeoutSeconds: NaN must be above 0',
    ]);
  });
});
