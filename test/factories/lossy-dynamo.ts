/**
 * A DynamoDB client for integration tests whose transport can lose a response after the server
 * applied the request (the request reached dynalite and was done; the SDK sees a connection reset
 * and sends the very same request again), and can fail a request outright.
 */
import type { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The part of the SDK's HTTP handler this test wraps. */
interface HandlerLike {
  handle(
    request: { headers: Record<string, string>; body?: unknown },
    options?: unknown,
  ): Promise<{ response: { statusCode: number; body?: unknown } }>;
}

/** A DynamoDB client (SDK retries on) whose transport can lose one response after the server applied the request. */
export interface LossyDynamo {
  readonly client: DynamoDBClient;
  /**
   * The next request for which `match` holds and that the server answers with 200 is applied,
   * then its response is dropped: the SDK sees `ECONNRESET` and retries the same request.
   */
  dropNextResponse(match: (operation: string, body: string) => boolean): void;
  /** Operations sent over HTTP, SDK retries included, e.g. `PutItem`. */
  readonly sent: string[];
  /** Operations whose response was dropped. */
  readonly dropped: string[];
}

export function lossyDynamo(endpoint: string): LossyDynamo {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 3,
  });
  const handler = client.config.requestHandler as unknown as HandlerLike;
  const send = handler.handle.bind(handler);
  const sent: string[] = [];
  const dropped: string[] = [];
  let pending: ((operation: string, body: string) => boolean) | undefined;
  handler.handle = async (request, options) => {
    const operation = (request.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const body = bodyText(request.body);
    sent.push(operation);
    const out = await send(request, options);
    if (pending && out.response.statusCode === 200 && pending(operation, body)) {
      pending = undefined;
      await drain(out.response.body as Readable | undefined);
      dropped.push(operation);
      throw Object.assign(
        new Error('socket hang up (test: response lost after the server applied the request)'),
        {
          code: 'ECONNRESET',
        },
      );
    }
    return out;
  };
  return {
    client,
    sent,
    dropped,
    dropNextResponse(match) {
      pending = match;
    },
  };
}

/** The request body as text: the SDK sends a string or bytes. */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return '';
}

async function drain(body: Readable | undefined): Promise<void> {
  if (!body || typeof body.resume !== 'function') return;
  await new Promise<void>((resolve, reject) => {
    body.on('end', resolve);
    body.on('error', reject);
    body.resume();
  });
}

/**
 * Keeps losing responses of `operation` on `lossy`: its requests the server answers with 200 are
 * counted from 1 (SDK retries included), and those for which `drop(count)` holds lose their
 * response (applied, then sent again by the SDK), e.g. `(n) => n % 2 === 1` for every other one.
 */
export function dropResponsesOf(
  lossy: LossyDynamo,
  operation: string,
  drop: (count: number) => boolean,
): void {
  let count = 0;
  const arm = () =>
    lossy.dropNextResponse((op) => {
      if (op !== operation) return false;
      count += 1;
      if (!drop(count)) return false;
      // This drop disarms it: arm again for the next one.
      queueMicrotask(arm);
      return true;
    });
  arm();
}
