/**
 * The error AWS answers for an injected fault ({@link faultAnswer}), in the protocol of the
 * request: JSON 1.0 with `__type` (and `x-amzn-query-error` for SQS), or the SQS query XML
 * `ErrorResponse`. Bodies and codes from the AWS API references (DynamoDB "Common Errors" and
 * "Error handling with DynamoDB"; SQS "Common Errors").
 */
import { randomUUID } from 'node:crypto';
import type { AwsAction, AwsFaultKind } from './aws-faults.ts';

/** An error answer: status, headers, body. */
export interface FaultAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The error AWS answers for a fault kind, in the protocol of the request. */
export function faultAnswer(
  kind: AwsFaultKind,
  action: AwsAction,
  requestId: string = randomUUID(),
): FaultAnswer {
  if (action.service === 'dynamodb' || kind.startsWith('dynamodb')) {
    const [status, type, message] = ((): [number, string, string] => {
      switch (kind) {
        case 'dynamodbThroughputExceeded':
          return [
            400,
            'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
            'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
          ];
        case 'dynamodbThrottling':
          return [
            400,
            'com.amazon.coral.availability#ThrottlingException',
            'Rate of requests exceeds the allowed throughput.',
          ];
        case 'dynamodbUnavailable':
          return [
            503,
            'com.amazon.coral.availability#ServiceUnavailableException',
            'Service unavailable (injected fault)',
          ];
        default:
          return [
            500,
            'com.amazonaws.dynamodb.v20120810#InternalServerError',
            'Internal server error (injected fault)',
          ];
      }
    })();
    return {
      status,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId },
      body: JSON.stringify({ __type: type, message }),
    };
  }
  const [status, code] = kind === 'sqsReceiveError' ? [503, 'ServiceUnavailable'] : [500, 'InternalError'];
  const message =
    status === 503
      ? 'The request has failed due to a temporary failure of the server (injected fault).'
      : 'There is an internal problem with SQS (injected fault).';
  if (action.protocol === 'json') {
    return {
      status,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': requestId,
        'x-amzn-query-error': `${code};Receiver`,
      },
      body: JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message }),
    };
  }
  return {
    status,
    headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
    body: `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Receiver</Type><Code>${code}</Code><Message>${message}</Message><Detail/></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
  };
}
