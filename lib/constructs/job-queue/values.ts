/** Small predicates on prop values shared by the settings and the rules. */
import { type Duration, Token } from 'aws-cdk-lib';

/** Seconds of a duration, or undefined when it is absent or an unresolved token (not checkable at synth). */
export function secondsOf(d: Duration | undefined): number | undefined {
  if (d === undefined || d.isUnresolved()) return undefined;
  return d.toSeconds({ integral: false });
}

/** A number known at synth (not a token). */
export function isKnownNumber(n: unknown): n is number {
  return typeof n === 'number' && !Token.isUnresolved(n);
}

/** A valid `maxAttempts`: a whole number of at least 1. */
export function isValidMaxAttempts(n: unknown): n is number {
  return isKnownNumber(n) && Number.isInteger(n) && n >= 1;
}

/** A valid `jobTimeoutSeconds`: a number above 0. */
export function isValidJobTimeout(n: unknown): n is number {
  return isKnownNumber(n) && n > 0;
}

/** How a value of the wrong type is shown in a problem line: `string '5'`, `undefined`, `object`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return `string '${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  return typeof value;
}
