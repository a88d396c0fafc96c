/**
 * The validation stage's error: what a job's schema said about `data`, as a
 * {@link JobDataInvalidError} (permanent: the same data fails on every delivery). The validation
 * itself stays in the pipeline (index.ts), where a synchronous schema costs no await.
 */
import { JobDataInvalidError } from '../worker-errors.ts';

/** One Standard Schema issue: its message and where in `data` it is. */
export interface SchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The error of data that `jobType`'s schema refused; one line per issue, `path: message`. */
export function invalidDataError(jobType: string, issues: readonly SchemaIssue[]): JobDataInvalidError {
  return new JobDataInvalidError(jobType, issues.map(formatIssue));
}

function formatIssue(issue: SchemaIssue): string {
  const path = (issue.path ?? [])
    .map((segment) => String(typeof segment === 'object' ? segment.key : segment))
    .join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
