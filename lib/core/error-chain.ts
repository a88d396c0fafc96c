/**
 * The one walk of an error's `cause` chain (ES2022 `Error.cause`), and optionally of an
 * `AggregateError`'s `errors` (Node's `net.connect` with `autoSelectFamily` throws one per
 * address tried). Classification (errors.ts), network codes (network-errors.ts) and operator
 * messages all search a chain with it, each with its own depth and its own question.
 */

/** How far and where {@link findInChain} looks. */
export interface ChainWalk {
  /** Deepest level visited: 0 is the error itself, 1 its cause, and so on. */
  readonly maxDepth: number;
  /** Also walk an `errors` array (AggregateError), after `cause`. Default false. */
  readonly aggregate?: boolean;
}

/**
 * Visits `error`, then its `cause`, depth first (a node's cause before its siblings in
 * `errors`), and returns the first answer `visit` gives that is not undefined. Only objects are
 * visited: a primitive thrown or set as a cause ends its branch. Reads `cause` and `errors`
 * with plain property gets; a getter that throws propagates (callers that must never throw
 * catch around it, as `classifyError` does).
 * @param visit asked once per object node, with its depth (0 for `error` itself).
 * @returns the first answer, or undefined when no node answers within `walk.maxDepth`.
 */
export function findInChain<T>(
  error: unknown,
  visit: (node: object, depth: number) => T | undefined,
  walk: ChainWalk,
  depth = 0,
): T | undefined {
  if (depth > walk.maxDepth || typeof error !== 'object' || error === null) return undefined;
  const found = visit(error, depth);
  if (found !== undefined) return found;
  const { cause } = error as { cause?: unknown };
  if (cause !== undefined) {
    const inCause = findInChain(cause, visit, walk, depth + 1);
    if (inCause !== undefined) return inCause;
  }
  if (walk.aggregate) {
    const { errors } = error as { errors?: unknown };
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const inInner = findInChain(inner, visit, walk, depth + 1);
        if (inInner !== undefined) return inInner;
      }
    }
  }
  return undefined;
}
