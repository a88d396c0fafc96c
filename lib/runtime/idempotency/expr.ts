/**
 * Condition and update expressions of the store's writes, as short as DynamoDB allows: they are
 * sent (and counted against the 4 KB expression limits) with every write.
 *
 * Attribute names are written as they are, except the few that are DynamoDB reserved words
 * (developer guide, ReservedWords.html; the list is case-insensitive): `status`, `result`, `value`
 * get an alias `#0`, `#1`... Values are numbered placeholders `:0`, `:1`... (both forms: developer
 * guide, Expressions.ExpressionAttributeNames.html and ExpressionAttributeValues.html).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The attribute names of the idempotency records that are DynamoDB reserved words. Every other
 * name the store writes (`pk`, `expiresAt`, `leaseToken`, `leaseExpiresAtMs`, `generation`,
 * `writeId`, `recordType`, `blockerPk`, `endedAtMs`, ...) is not one, which dynalite (it checks
 * the list) confirms in the store's tests.
 */
// `state`: the state item of a job sent for later (scheduled-job-store.ts).
const RESERVED: ReadonlySet<string> = new Set(['status', 'result', 'value', 'state']);

/**
 * Builds condition and update expressions: names aliased only when reserved, numbered values, so
 * only used names and values are sent (DynamoDB rejects unused ones).
 */
export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, AttributeValue> = {};
  readonly #aliases = new Map<string, string>();
  #next = 0;
  /** The name of an attribute in an expression: itself, or its alias when it is a reserved word. */
  n(attribute: string): string {
    if (!RESERVED.has(attribute)) return attribute;
    let alias = this.#aliases.get(attribute);
    if (alias === undefined) {
      alias = `#${this.#aliases.size}`;
      this.#aliases.set(attribute, alias);
      this.names[alias] = attribute;
    }
    return alias;
  }
  /** Placeholder of a value. */
  v(value: AttributeValue): string {
    const token = `:${this.#next++}`;
    this.values[token] = value;
    return token;
  }
  params(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  } {
    return {
      ...(this.#aliases.size > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(this.#next > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}
