/**
 * `AWSTraceHeader` at the SQS boundary of the local runtime. SQS keeps the `X-Amzn-Trace-Id`
 * header of a SendMessage / SendMessageBatch request (or an entry's
 * `MessageSystemAttributes.AWSTraceHeader`, which wins) with each message it stores, and returns
 * it as the `AWSTraceHeader` system attribute [xray-services-sqs]. The embedded emulator (fauxqs
 * 2.4) keeps neither, so this proxy in front of the SQS endpoint reads the header of each send,
 * forwards the request untouched, and remembers the header by the `MessageId` SQS answered; the
 * event source mappings add it to the records they deliver ({@link TraceHeaderProxy.headerOf})
 * when the emulator did not return one. JSON protocol only (AWS SDK v3); other requests are
 * forwarded as they are.
 *
 * The queue URLs the endpoint answers with (CreateQueue, GetQueueUrl, ListQueues,
 * ListDeadLetterSourceQueues) are put on the proxy's own origin: the emulator's own URLs carry its
 * random port (fauxqs: `http://sqs.us-east-1.localhost:<port>/...`), and the documented ones,
 * stable from one start to the next with a fixed port, are `http://127.0.0.1:<port>/<account>/<name>`.
 *
 * - xray-services-sqs: https://docs.aws.amazon.com/xray/latest/devguide/xray-services-sqs.html
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { forwardHeaders, readAll } from './http-forward.ts';
import { normaliseQueueUrl } from './provision/queues.ts';

/** Headers remembered at most (oldest forgotten first): a long soak must not grow without bound. */
export const MAX_REMEMBERED_HEADERS = 200_000;

/** A running proxy. */
export interface TraceHeaderProxy {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The trace header SQS would keep with this message, when its send carried one. */
  headerOf(messageId: string): string | undefined;
  close(): Promise<void>;
}

/** Entry id → trace header of a send request; undefined when it is not a JSON send. */
function sendHeaders(headers: IncomingHttpHeaders, body: Buffer): Map<string, string> | undefined {
  const target = String(headers['x-amz-target'] ?? '');
  if (target !== 'AmazonSQS.SendMessage' && target !== 'AmazonSQS.SendMessageBatch') return undefined;
  const httpHeader = headers['x-amzn-trace-id'];
  const fromHeader = typeof httpHeader === 'string' && httpHeader !== '' ? httpHeader : undefined;
  type Entry = { Id?: string; MessageSystemAttributes?: { AWSTraceHeader?: { StringValue?: string } } };
  let parsed: Entry & { Entries?: Entry[] };
  try {
    parsed = JSON.parse(body.toString('utf8')) as Entry & { Entries?: Entry[] };
  } catch {
    return undefined;
  }
  const entries = target === 'AmazonSQS.SendMessage' ? [{ ...parsed, Id: '' }] : (parsed.Entries ?? []);
  const out = new Map<string, string>();
  for (const entry of entries) {
    const header = entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue ?? fromHeader;
    if (header !== undefined) out.set(String(entry.Id ?? ''), header);
  }
  return out;
}

/** Message ids of a send response, by entry id (`''` for SendMessage). */
function sentMessageIds(body: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      MessageId?: string;
      Successful?: { Id?: string; MessageId?: string }[];
    };
    if (typeof parsed.MessageId === 'string') out.set('', parsed.MessageId);
    for (const s of parsed.Successful ?? []) {
      if (typeof s.MessageId === 'string') out.set(String(s.Id ?? ''), s.MessageId);
    }
  } catch {
    // Not JSON (an error page): nothing was stored.
  }
  return out;
}

/** Targets whose answers name queue URLs, and the fields that hold them. */
const QUEUE_URL_ANSWERS: Readonly<Record<string, 'QueueUrl' | 'QueueUrls' | 'queueUrls'>> = {
  'AmazonSQS.CreateQueue': 'QueueUrl',
  'AmazonSQS.GetQueueUrl': 'QueueUrl',
  'AmazonSQS.ListQueues': 'QueueUrls',
  'AmazonSQS.ListDeadLetterSourceQueues': 'queueUrls',
};

/**
 * The answer to `target` with its queue URLs on `origin`; the payload itself when it names none
 * (another action, an error, not JSON).
 */
export function withQueueUrlsOn(target: string, payload: Buffer, origin: string): Buffer {
  const field = QUEUE_URL_ANSWERS[target];
  if (field === undefined) return payload;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
  } catch {
    return payload;
  }
  const value = parsed[field];
  const moved = (url: unknown) => (typeof url === 'string' ? normaliseQueueUrl(url, origin) : url);
  if (typeof value === 'string') parsed[field] = moved(value);
  else if (Array.isArray(value)) parsed[field] = value.map(moved);
  else return payload;
  return Buffer.from(JSON.stringify(parsed), 'utf8');
}

/** Starts the proxy on 127.0.0.1 (a free port) in front of `target` (an http(s) SQS endpoint). */
export async function startTraceHeaderProxy(target: string, port = 0): Promise<TraceHeaderProxy> {
  const base = new URL(target);
  const https = base.protocol === 'https:';
  const agent = https ? new HttpsAgent({ keepAlive: true }) : new Agent({ keepAlive: true });
  const remembered = new Map<string, string>();
  // The proxy's own origin, once listening: the queue URLs it answers with.
  let origin = '';

  const remember = (messageId: string, header: string) => {
    if (remembered.size >= MAX_REMEMBERED_HEADERS) {
      const oldest = remembered.keys().next().value;
      if (oldest !== undefined) remembered.delete(oldest);
    }
    remembered.set(messageId, header);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const headers = sendHeaders(req.headers, body);
    const url = new URL(req.url ?? '/', base);
    const upstream = (https ? httpsRequest : httpRequest)(url, {
      method: req.method,
      headers: forwardHeaders(req.headers, body.length, ['host']),
      agent,
    });
    upstream.on('response', async (answer) => {
      try {
        const ok = (answer.statusCode ?? 500) < 300;
        const read = await readAll(answer);
        const payload = ok ? withQueueUrlsOn(String(req.headers['x-amz-target'] ?? ''), read, origin) : read;
        if (headers !== undefined && headers.size > 0 && (answer.statusCode ?? 500) < 300) {
          for (const [entryId, messageId] of sentMessageIds(payload)) {
            const header = headers.get(entryId);
            if (header !== undefined) remember(messageId, header);
          }
        }
        res.writeHead(answer.statusCode ?? 502, forwardHeaders(answer.headers, payload.length, ['host']));
        res.end(payload);
      } catch {
        res.destroy();
      }
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    // A client that goes away (an aborted long poll, a terminated function thread) takes its
    // upstream request with it.
    res.on('close', () => {
      if (!res.writableEnded) upstream.destroy();
    });
    upstream.end(body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 65_000;
  // A fixed port in use rejects with Node's EADDRINUSE (the caller names the option).
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const listening = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${listening}`;
  return {
    url: origin,
    headerOf: (messageId) => remembered.get(messageId),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
