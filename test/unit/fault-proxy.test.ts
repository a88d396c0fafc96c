/**
 * The fault proxy of the soak (lib/local/fault-proxy.ts) in front of a stand-in upstream: each
 * fault kind is answered as AWS answers it, read back through the real AWS SDK clients (error
 * name, status, and that the SDK's own retry gets through it); response-lost kinds reach the
 * upstream, the others do not; exempt requests are never faulted; decisions repeat with a seed.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { faultAnswer } from '../../lib/local/aws-fault-answers.ts';
import {
  AWS_FAULT_KINDS,
  type AwsFaultKind,
  awsActionOf,
  faultKindsFor,
  resolveAwsFaultRates,
} from '../../lib/local/aws-faults.ts';
import {
  exemptFromFaults,
  FAULT_EXEMPT_HEADER,
  type FaultProxy,
  startFaultProxy,
} from '../../lib/local/fault-proxy.ts';

/** What the stand-in upstream received. */
interface Received {
  readonly target: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let upstream: Server;
let upstreamUrl: string;
const received: Received[] = [];
const proxies: FaultProxy[] = [];

beforeAll(async () => {
  // Answers every action with a minimal valid JSON 1.0 response (SendMessage with the body's MD5,
  // which the SQS client checks).
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const target = req.headers['x-amz-target'] as string | undefined;
      received.push({ target, headers: req.headers, body });
      let answer: Record<string, unknown> = {};
      if (target === 'AmazonSQS.SendMessage') {
        const { MessageBody } = JSON.parse(body) as { MessageBody: string };
        answer = { MessageId: 'm-1', MD5OfMessageBody: createHash('md5').update(MessageBody).digest('hex') };
      }
      const text = JSON.stringify(answer);
      res.writeHead(200, {
        'content-type': 'application/x-amz-json-1.0',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  received.length = 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

async function proxy(options: Partial<Parameters<typeof startFaultProxy>[0]> = {}): Promise<FaultProxy> {
  const p = await startFaultProxy({ target: upstreamUrl, ...options });
  proxies.push(p);
  return p;
}

const clientConfig = (endpoint: string, maxAttempts: number) => ({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  maxAttempts,
});

const QUEUE_URL = (p: FaultProxy) => `${p.url}/000000000000/q`;

/** One call of the action a kind applies to, through an SDK client on the proxy. */
function callFor(kind: AwsFaultKind, p: FaultProxy, maxAttempts: number): Promise<unknown> {
  const dynamodb = new DynamoDBClient(clientConfig(p.url, maxAttempts));
  const sqs = new SQSClient(clientConfig(p.url, maxAttempts));
  const key = { pk: { S: 'k' } };
  switch (kind) {
    case 'dynamodbResponseLost':
      return dynamodb.send(new PutItemCommand({ TableName: 't', Item: key }));
    case 'sqsSendError':
    case 'sqsSendResponseLost':
      return sqs.send(new SendMessageCommand({ QueueUrl: QUEUE_URL(p), MessageBody: 'hello' }));
    case 'sqsReceiveError':
      return sqs.send(new ReceiveMessageCommand({ QueueUrl: QUEUE_URL(p), WaitTimeSeconds: 0 }));
    case 'sqsDeleteError':
    case 'sqsDeleteResponseLost':
      return sqs.send(new DeleteMessageCommand({ QueueUrl: QUEUE_URL(p), ReceiptHandle: 'r' }));
    default:
      return dynamodb.send(new GetItemCommand({ TableName: 't', Key: key }));
  }
}

/** What AWS answers for each kind: the SDK error's name and HTTP status. */
const EXPECTED: Record<AwsFaultKind, { name: string; status: number; forwarded: boolean }> = {
  dynamodbThroughputExceeded: {
    name: 'ProvisionedThroughputExceededException',
    status: 400,
    forwarded: false,
  },
  dynamodbThrottling: { name: 'ThrottlingException', status: 400, forwarded: false },
  dynamodbInternalError: { name: 'InternalServerError', status: 500, forwarded: false },
  dynamodbUnavailable: { name: 'ServiceUnavailableException', status: 503, forwarded: false },
  dynamodbResponseLost: { name: 'InternalServerError', status: 500, forwarded: true },
  sqsSendError: { name: 'InternalError', status: 500, forwarded: false },
  sqsSendResponseLost: { name: 'InternalError', status: 500, forwarded: true },
  sqsReceiveError: { name: 'ServiceUnavailable', status: 503, forwarded: false },
  sqsDeleteError: { name: 'InternalError', status: 500, forwarded: false },
  sqsDeleteResponseLost: { name: 'InternalError', status: 500, forwarded: true },
};

describe('fault proxy: each kind answered as AWS does', () => {
  it.each(AWS_FAULT_KINDS)(
    '%s: the SDK sees the AWS error; the upstream sees the request only when it was done',
    async (kind) => {
      const p = await proxy();
      p.injectNext(kind);
      const error = (await callFor(kind, p, 1).then(
        () => undefined,
        (e: unknown) => e,
      )) as { name: string; $metadata: { httpStatusCode?: number } } | undefined;
      expect(error?.name).toBe(EXPECTED[kind].name);
      expect(error?.$metadata.httpStatusCode).toBe(EXPECTED[kind].status);
      expect(received).toHaveLength(EXPECTED[kind].forwarded ? 1 : 0);
      expect(p.stats().faults[kind]).toBe(1);
    },
  );

  it.each(AWS_FAULT_KINDS)(
    '%s: the SDK retries it and the call goes through on the next try',
    async (kind) => {
      const p = await proxy();
      p.injectNext(kind);
      await expect(callFor(kind, p, 2)).resolves.toBeDefined();
      // A lost response was done once and sent again by the SDK: the upstream saw it twice.
      expect(received).toHaveLength(EXPECTED[kind].forwarded ? 2 : 1);
      expect(p.stats()).toMatchObject({ faultable: 2, faults: { [kind]: 1 } });
    },
  );

  it('answers the SQS query protocol with its XML ErrorResponse', () => {
    const answer = faultAnswer(
      'sqsSendError',
      { service: 'sqs', action: 'SendMessage', protocol: 'query' },
      'req-1',
    );
    expect(answer.status).toBe(500);
    expect(answer.headers['content-type']).toBe('text/xml');
    expect(answer.body).toContain('<Code>InternalError</Code>');
    expect(answer.body).toContain('<RequestId>req-1</RequestId>');
  });

  it('marks JSON SQS errors with x-amzn-query-error, as SQS does for clients of the query era', () => {
    const answer = faultAnswer('sqsReceiveError', {
      service: 'sqs',
      action: 'ReceiveMessage',
      protocol: 'json',
    });
    expect(answer.headers['x-amzn-query-error']).toBe('ServiceUnavailable;Receiver');
    expect(JSON.parse(answer.body)).toMatchObject({ __type: 'com.amazonaws.sqs#ServiceUnavailable' });
  });
});

describe('fault proxy: which requests may be faulted', () => {
  it('reads the action from X-Amz-Target, else from the Action parameter', () => {
    const empty = Buffer.alloc(0);
    expect(awsActionOf({ 'x-amz-target': 'DynamoDB_20120810.UpdateItem' }, '/', empty)).toEqual({
      service: 'dynamodb',
      action: 'UpdateItem',
      protocol: 'json',
    });
    expect(awsActionOf({ 'x-amz-target': 'AmazonSQS.DeleteMessageBatch' }, '/', empty)).toMatchObject({
      service: 'sqs',
      action: 'DeleteMessageBatch',
    });
    const form = Buffer.from('Action=SendMessageBatch&QueueUrl=x');
    expect(
      awsActionOf({ 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, '/', form),
    ).toEqual({ service: 'sqs', action: 'SendMessageBatch', protocol: 'query' });
    expect(awsActionOf({}, '/?Action=ReceiveMessage', empty)).toMatchObject({ action: 'ReceiveMessage' });
  });

  it('faults item calls and the listed SQS actions only; response-lost only for DynamoDB writes', () => {
    const kinds = (service: 'sqs' | 'dynamodb', action: string) =>
      faultKindsFor({ service, action, protocol: 'json' });
    expect(kinds('dynamodb', 'PutItem')).toContain('dynamodbResponseLost');
    expect(kinds('dynamodb', 'GetItem')).not.toContain('dynamodbResponseLost');
    expect(kinds('dynamodb', 'GetItem')).toContain('dynamodbThrottling');
    for (const action of ['CreateTable', 'DescribeTable', 'UpdateTimeToLive'])
      expect(kinds('dynamodb', action)).toEqual([]);
    expect(kinds('sqs', 'SendMessageBatch')).toEqual(['sqsSendError', 'sqsSendResponseLost']);
    expect(kinds('sqs', 'DeleteMessage')).toEqual(['sqsDeleteError', 'sqsDeleteResponseLost']);
    for (const action of ['CreateQueue', 'GetQueueAttributes', 'ChangeMessageVisibility', 'PurgeQueue'])
      expect(kinds('sqs', action)).toEqual([]);
  });

  it('never faults a request of an exempt client, and does not forward the exemption header', async () => {
    const p = await proxy({ rates: { dynamodbThrottling: 1 } });
    const exempt = exemptFromFaults(new DynamoDBClient(clientConfig(p.url, 1)));
    await exempt.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } }));
    expect(received).toHaveLength(1);
    expect(received[0]?.headers[FAULT_EXEMPT_HEADER]).toBeUndefined();
    const plain = new DynamoDBClient(clientConfig(p.url, 1));
    await expect(
      plain.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'k' } } })),
    ).rejects.toMatchObject({
      name: 'ThrottlingException',
    });
    expect(p.stats()).toMatchObject({ requests: 2, exempt: 1, faultable: 1 });
  });

  it('forwards what it does not fault untouched: path, target, body', async () => {
    const p = await proxy({ rates: { dynamodbThrottling: 1, sqsSendError: 1 } });
    const sqs = new SQSClient(clientConfig(p.url, 1));
    // GetQueueAttributes is never faulted; the stand-in answers {} (no attributes).
    const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: QUEUE_URL(p), AttributeNames: ['All'] }));
    expect(received[0]?.target).toBe('AmazonSQS.GetQueueAttributes');
    expect(JSON.parse(received[0]?.body ?? '{}')).toMatchObject({ QueueUrl: QUEUE_URL(p) });
  });
});

describe('fault proxy: seeded decisions', () => {
  /** The fault of each of `n` GetItem calls: the kind's name, or 'ok'. */
  async function sequence(seed: number, n: number): Promise<string[]> {
    const p = await proxy({ seed, rates: { dynamodbThrottling: 0.3, dynamodbInternalError: 0.2 } });
    const client = new DynamoDBClient(clientConfig(p.url, 1));
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      out.push(
        await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: `k${i}` } } })).then(
          () => 'ok',
          (e: { name: string }) => e.name,
        ),
      );
    }
    return out;
  }

  it('injects the same faults into the same request sequence with the same seed, others with another', async () => {
    const a = await sequence(7, 40);
    const b = await sequence(7, 40);
    const c = await sequence(8, 40);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    expect(new Set(a)).toEqual(new Set(['ok', 'ThrottlingException', 'InternalServerError']));
  });

  it('refuses rates outside [0, 1], kinds sharing an action above 1 in sum, and unknown kinds', () => {
    expect(() => resolveAwsFaultRates({ sqsReceiveError: 1.5 })).toThrow(
      /sqsReceiveError must be in \[0, 1\]/,
    );
    expect(() => resolveAwsFaultRates({ sqsSendError: 0.7, sqsSendResponseLost: 0.4 })).toThrow(
      /sqsSendError \+ sqsSendResponseLost add up to 1.1/,
    );
    expect(() => resolveAwsFaultRates({ nope: 0.1 } as never)).toThrow(/unknown fault kind nope/);
    expect(resolveAwsFaultRates({ sqsDeleteError: 0.5 })).toMatchObject({
      sqsDeleteError: 0.5,
      sqsSendError: 0,
    });
  });
});
