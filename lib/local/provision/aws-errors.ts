/**
 * Recognises an emulator's "not found" answers while provisioning (a queue or table that does not
 * exist yet): the SDK gives the error code as `name`, `Code` or the end of the JSON `__type`,
 * depending on the protocol and the emulator.
 */

/** True when `error` carries one of `names` as its name, query-protocol code or JSON `__type`. */
export function isErrorNamed(error: unknown, ...names: string[]): boolean {
  const e = error as { name?: string; Code?: string; __type?: string };
  return names.some((n) => e?.name === n || e?.Code === n || (e?.__type ?? '').endsWith(n));
}
