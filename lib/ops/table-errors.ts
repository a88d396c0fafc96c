/**
 * Errors of reading the idempotency table, as one line an operator can act on: which table, at
 * which endpoint, what went wrong and what to check. Sources: GetItem API reference (errors
 * `ResourceNotFoundException`, `ValidationException`); network codes: core/network-errors.ts.
 */
import { networkErrorCode, UNREACHABLE_CODES } from '../core/network-errors.ts';
import { OpsError } from './errors.ts';

/**
 * Wraps an error met reading `table` into an {@link OpsError} (`TableReadFailed`) whose message
 * says what to check; the original error is its `cause`.
 * @param flag the command's flag that named the table, named in the message. @default '--idempotency-table'
 */
export function tableReadError(
  error: unknown,
  table: string,
  endpoint: string | undefined,
  flag = '--idempotency-table',
): OpsError {
  const where = endpoint === undefined ? 'on AWS' : `at ${endpoint}`;
  const name = (error as { name?: unknown })?.name;
  const message = error instanceof Error ? error.message : String(error);
  const code = networkErrorCode(error, UNREACHABLE_CODES);
  let text: string;
  if (code !== undefined) {
    text = `cannot reach DynamoDB ${where} (${code}): check --dynamodb-endpoint (or AWS_ENDPOINT_URL_DYNAMODB) and that it is running`;
  } else if (name === 'ResourceNotFoundException') {
    text = `no idempotency table named "${table}" ${where}: check ${flag} (the stack output IdempotencyTableName) and the region`;
  } else if (name === 'ValidationException') {
    text = `DynamoDB ${where} refused the table name "${table}": ${message} (check ${flag})`;
  } else if (name === 'UnknownOperationException' || /Unknown action/i.test(message)) {
    text = `the endpoint ${endpoint ?? ''} is not DynamoDB (${message}): give the DynamoDB endpoint with --dynamodb-endpoint (locally: the "DynamoDB endpoint" line that npm start / sqs-jobs local print)`;
  } else {
    text = `cannot read the idempotency table "${table}" ${where}: ${typeof name === 'string' ? `${name}: ` : ''}${message}`;
  }
  return new OpsError(text, { code: 'TableReadFailed', cause: error });
}
