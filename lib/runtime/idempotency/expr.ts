/**
 * Condition and update expressions of the store's writes.
 *
 * Reserved words (DynamoDB developer guide, ReservedWords.html): `status`, `result`, `value` ...
 * are attribute names of the records, so every name is aliased.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * Builds condition and update expressions with aliased names (`#attr`) and numbered values
 * (`:v0`...), so reserved words are safe and only used names and values are sent (DynamoDB
 * rejects unused ones).
 */
export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, AttributeValue> = {};
  #next = 0;
  /** Alias of an attribute name. */
  n(attribute: string): string {
    const token = `#${attribute}`;
    this.names[token] = attribute;
    return token;
  }
  /** Placeholder of a value. */
  v(value: AttributeValue): string {
    const token = `:v${this.#next++}`;
    this.values[token] = value;
    return token;
  }
  params(): {
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  } {
    return Object.keys(this.values).length === 0
      ? { ExpressionAttributeNames: this.names }
      : { ExpressionAttributeNames: this.names, ExpressionAttributeValues: this.values };
  }
}
