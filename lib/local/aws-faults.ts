/**
 * The AWS API faults the fault proxy (fault-proxy.ts) injects: their kinds, their rates, and
 * which requests each may hit, read from the request the way AWS reads its action.
 *
 * Fault kinds ({@link AWS_FAULT_KINDS}) and the error each answers (AWS API references:
 * DynamoDB "Common Errors" and "Error handling with DynamoDB"; SQS "Common Errors"):
 * - `dynamodbThroughputExceeded`: 400 `ProvisionedThroughputExceededException`, not forwarded;
 * - `dynamodbThrottling`: 400 `ThrottlingException`, not forwarded;
 * - `dynamodbInternalError`: 500 `InternalServerError`, not forwarded;
 * - `dynamodbUnavailable`: 503 `ServiceUnavailable`, not forwarded;
 * - `dynamodbResponseLost`: a write (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
 *   TransactWriteItems) is forwarded and done, then answered 500 `InternalServerError`;
 * - `sqsSendError`: SendMessage / SendMessageBatch answered 500 `InternalError`, not forwarded;
 * - `sqsSendResponseLost`: SendMessage / SendMessageBatch forwarded (the messages are on the
 *   queue), then answered 500 `InternalError`;
 * - `sqsReceiveError`: ReceiveMessage answered 503 `ServiceUnavailable`, not forwarded (a lost
 *   receive response is not injected: it would only hide messages for a visibility timeout);
 * - `sqsDeleteError`: DeleteMessage / DeleteMessageBatch answered 500 `InternalError`, not forwarded;
 * - `sqsDeleteResponseLost`: DeleteMessage / DeleteMessageBatch forwarded (deleted), then 500.
 * Every other action (CreateQueue, GetQueueAttributes, ChangeMessageVisibility, Scan, DescribeTable...)
 * is always forwarded untouched.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Kinds of injected AWS API faults, in the order they take slices of [0, 1). */
export const AWS_FAULT_KINDS = [
  'dynamodbThroughputExceeded',
  'dynamodbThrottling',
  'dynamodbInternalError',
  'dynamodbUnavailable',
  'dynamodbResponseLost',
  'sqsSendError',
  'sqsSendResponseLost',
  'sqsReceiveError',
  'sqsDeleteError',
  'sqsDeleteResponseLost',
] as const;
/** One kind of injected AWS API fault. */
export type AwsFaultKind = (typeof AWS_FAULT_KINDS)[number];

/** Probability per request of each kind, among the requests of the actions it applies to. */
export type AwsFaultRates = Readonly<Record<AwsFaultKind, number>>;

/** No faults. */
export const NO_AWS_FAULTS: AwsFaultRates = Object.freeze(
  Object.fromEntries(AWS_FAULT_KINDS.map((k) => [k, 0])) as Record<AwsFaultKind, number>,
);

/** Short labels of the kinds, for reports. */
export const AWS_FAULT_LABELS: Readonly<Record<AwsFaultKind, string>> = {
  dynamodbThroughputExceeded: 'DynamoDB 400 ProvisionedThroughputExceeded',
  dynamodbThrottling: 'DynamoDB 400 ThrottlingException',
  dynamodbInternalError: 'DynamoDB 500',
  dynamodbUnavailable: 'DynamoDB 503',
  dynamodbResponseLost: 'DynamoDB write done, response lost (500)',
  sqsSendError: 'SQS send 500',
  sqsSendResponseLost: 'SQS send done, response lost (500)',
  sqsReceiveError: 'SQS receive 503',
  sqsDeleteError: 'SQS delete 500',
  sqsDeleteResponseLost: 'SQS delete done, response lost (500)',
};

const DYNAMODB_DATA_ACTIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);
const DYNAMODB_WRITE_ACTIONS = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);
const SQS_SEND = new Set(['SendMessage', 'SendMessageBatch']);
const SQS_DELETE = new Set(['DeleteMessage', 'DeleteMessageBatch']);

/** The service and action of a request. */
export interface AwsAction {
  readonly service: 'sqs' | 'dynamodb' | 'unknown';
  /** e.g. `SendMessage`, `PutItem`; '' when unknown. */
  readonly action: string;
  /** `json` (X-Amz-Target) or `query` (Action parameter). */
  readonly protocol: 'json' | 'query';
}

/**
 * Reads the service and action of a request: `X-Amz-Target` first (JSON protocols), else the
 * `Action` parameter of the query string or of a form-encoded body (SQS query protocol).
 */
export function awsActionOf(headers: IncomingHttpHeaders, url: string, body: Buffer): AwsAction {
  const target = headers['x-amz-target'];
  if (typeof target === 'string' && target.includes('.')) {
    const [prefix, action = ''] = target.split('.', 2);
    if (prefix?.startsWith('DynamoDB_')) return { service: 'dynamodb', action, protocol: 'json' };
    if (prefix === 'AmazonSQS') return { service: 'sqs', action, protocol: 'json' };
    return { service: 'unknown', action, protocol: 'json' };
  }
  const query = new URL(url, 'http://local').searchParams.get('Action');
  const contentType = String(headers['content-type'] ?? '');
  const form = contentType.includes('application/x-www-form-urlencoded')
    ? new URLSearchParams(body.toString('utf8')).get('Action')
    : null;
  const action = form ?? query;
  // Only SQS speaks the query protocol among the services proxied here.
  return action
    ? { service: 'sqs', action, protocol: 'query' }
    : { service: 'unknown', action: '', protocol: 'query' };
}

/** The kinds that may hit a request of this action. */
export function faultKindsFor(action: AwsAction): readonly AwsFaultKind[] {
  if (action.service === 'dynamodb') {
    if (!DYNAMODB_DATA_ACTIONS.has(action.action)) return [];
    const kinds: AwsFaultKind[] = [
      'dynamodbThroughputExceeded',
      'dynamodbThrottling',
      'dynamodbInternalError',
      'dynamodbUnavailable',
    ];
    if (DYNAMODB_WRITE_ACTIONS.has(action.action)) kinds.push('dynamodbResponseLost');
    return kinds;
  }
  if (action.service === 'sqs') {
    if (SQS_SEND.has(action.action)) return ['sqsSendError', 'sqsSendResponseLost'];
    if (action.action === 'ReceiveMessage') return ['sqsReceiveError'];
    if (SQS_DELETE.has(action.action)) return ['sqsDeleteError', 'sqsDeleteResponseLost'];
  }
  return [];
}

/**
 * Picks the fault for a draw `u` in [0, 1) among `kinds`: they take consecutive slices of [0, 1)
 * by their rates, in the given order; the rest means no fault.
 */
export function pickAwsFault(
  u: number,
  kinds: readonly AwsFaultKind[],
  rates: AwsFaultRates,
): AwsFaultKind | undefined {
  let edge = 0;
  for (const kind of kinds) {
    edge += rates[kind];
    if (u < edge) return kind;
  }
  return undefined;
}

/** Whether the fault answers after forwarding the request (the operation took effect). */
export function isResponseLost(kind: AwsFaultKind): boolean {
  return (
    kind === 'dynamodbResponseLost' || kind === 'sqsSendResponseLost' || kind === 'sqsDeleteResponseLost'
  );
}

/**
 * Fills missing kinds with 0 and checks the rates: each in [0, 1], and the kinds that share an
 * action add up to at most 1.
 * @throws {RangeError} naming every bad rate.
 */
export function resolveAwsFaultRates(rates: Partial<AwsFaultRates> = {}): AwsFaultRates {
  const resolved = { ...NO_AWS_FAULTS, ...rates };
  const problems: string[] = [];
  for (const kind of Object.keys(resolved)) {
    if (!(AWS_FAULT_KINDS as readonly string[]).includes(kind)) problems.push(`unknown fault kind ${kind}`);
  }
  for (const kind of AWS_FAULT_KINDS) {
    const rate = resolved[kind];
    if (!Number.isFinite(rate) || rate < 0 || rate > 1)
      problems.push(`${kind} must be in [0, 1], got ${rate}`);
  }
  const samples: AwsAction[] = [
    { service: 'dynamodb', action: 'PutItem', protocol: 'json' },
    { service: 'sqs', action: 'SendMessage', protocol: 'json' },
    { service: 'sqs', action: 'DeleteMessage', protocol: 'json' },
  ];
  for (const sample of samples) {
    const kinds = faultKindsFor(sample);
    const sum = kinds.reduce((acc, k) => acc + resolved[k], 0);
    if (sum > 1 + 1e-9)
      problems.push(`${kinds.join(' + ')} add up to ${Number(sum.toFixed(6))}, more than 1`);
  }
  if (problems.length > 0) throw new RangeError(`invalid AWS fault rates: ${problems.join('; ')}`);
  return Object.freeze(resolved);
}
