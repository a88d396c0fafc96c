/**
 * Which DynamoDB endpoint the idempotency-table readers (`sqs-jobs job`, `console`) use: the
 * local runtime's SQS and DynamoDB emulators listen on different ports, so the SQS endpoint
 * variable must never be taken for DynamoDB.
 */
import { describe, expect, it } from 'vitest';
import { dynamodbEndpointOf } from '../../lib/ops/client.ts';

describe('dynamodbEndpointOf', () => {
  const env = {
    AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566',
    AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000',
  };

  it('reads AWS_ENDPOINT_URL_DYNAMODB, never the SQS variable', () => {
    expect(dynamodbEndpointOf({}, env)).toBe('http://127.0.0.1:8000');
    expect(dynamodbEndpointOf({}, { AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:4566' })).toBeUndefined();
    expect(dynamodbEndpointOf({}, { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' })).toBe(
      'http://127.0.0.1:5000',
    );
  });

  it('puts the flags first: --dynamodb-endpoint, then --endpoint (one endpoint for both services)', () => {
    expect(dynamodbEndpointOf({ dynamodbEndpoint: 'http://d:1', endpoint: 'http://e:2' }, env)).toBe(
      'http://d:1',
    );
    expect(dynamodbEndpointOf({ endpoint: 'http://e:2' }, env)).toBe('http://e:2');
  });

  it('ignores the variables with AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true', () => {
    expect(dynamodbEndpointOf({}, { ...env, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' })).toBeUndefined();
  });

  it('refuses a value that is not an http(s) URL, naming where it came from', () => {
    expect(() => dynamodbEndpointOf({ dynamodbEndpoint: 'notaurl' }, {})).toThrow(
      '--dynamodb-endpoint: "notaurl" is not an http(s) URL (e.g. http://localhost:8000)',
    );
    expect(() => dynamodbEndpointOf({}, { AWS_ENDPOINT_URL_DYNAMODB: 'ftp://x' })).toThrow(
      'AWS_ENDPOINT_URL_DYNAMODB: "ftp://x" is not an http(s) URL',
    );
  });
});
