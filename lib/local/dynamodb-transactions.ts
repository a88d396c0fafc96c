/**
 * `TransactWriteItems` for the embedded DynamoDB emulator: dynalite 4 has no transactions
 * (/work/shared/TOOLCHAIN.md), and batches count a child with one (lease completion + the child's
 * outcome + the batch counter). Emulated in front of dynalite with what DynamoDB promises
 * (API_TransactWriteItems.html; developer guide "Amazon DynamoDB Transactions"):
 * - all or nothing: the actions are applied one by one with their own conditions, and when one
 *   fails its condition the ones already applied are put back as they were (the item read before,
 *   or deleted when there was none); the answer is `TransactionCanceledException` with
 *   `CancellationReasons`, one per action, `ConditionalCheckFailed` on the one that failed
 *   (DynamoDB evaluates every condition; here the actions after the failed one are reported `None`);
 * - isolation: a transaction runs alone among writes: it waits for the writes in flight (at most
 *   2 s: a write never answered must not stop them all), and writes that arrive meanwhile wait for it (reads do not wait: one may see a transaction half
 *   applied, which DynamoDB's serializable reads would not: nothing of sqs-jobs reads during one);
 * - `ClientRequestToken`: the same token with the same request within 10 minutes answers success
 *   without applying it again; with another request, `IdempotentParameterMismatchException`.
 * The actions are sent to dynalite as the single-item writes they name (Put → PutItem, Update →
 * UpdateItem, Delete → DeleteItem, ConditionCheck → a PutItem of the item as it is, conditioned).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Header of the requests this module sends to dynalite itself: they pass the gate. */
const INTERNAL_HEADER = 'x-sqs-jobs-transaction';
const TARGET_PREFIX = 'DynamoDB_20120810.';
const WRITE_TARGETS = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
/** How long a ClientRequestToken is remembered (API_TransactWriteItems.html: 10 minutes). */
const TOKEN_MEMORY_MS = 10 * 60 * 1000;

type Json = Record<string, unknown>;
type Dispatch = (request: IncomingMessage, response: ServerResponse) => void;

/** Longest wait of a transaction for the writes in flight before it, in milliseconds. */
const MAX_EXCLUSIVE_WAIT_MS = 2_000;

/** Writes run together; a transaction runs alone among them. */
class WriteGate {
  #shared = 0;
  #exclusive = false;
  #exclusiveWaiting = 0;
  #waiters: (() => void)[] = [];

  async shared(): Promise<() => void> {
    while (this.#exclusive || this.#exclusiveWaiting > 0) await this.#changed();
    this.#shared += 1;
    return once(() => {
      this.#shared -= 1;
      this.#notify();
    });
  }

  /**
   * Waits for the writes in flight, at most {@link MAX_EXCLUSIVE_WAIT_MS} for them (a write whose
   * answer never comes, its client gone, must not stop every write of the run): then it goes on.
   */
  async exclusive(): Promise<() => void> {
    this.#exclusiveWaiting += 1;
    const deadline = Date.now() + MAX_EXCLUSIVE_WAIT_MS;
    while (this.#exclusive || (this.#shared > 0 && Date.now() < deadline)) {
      await Promise.race([this.#changed(), new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    this.#exclusiveWaiting -= 1;
    this.#exclusive = true;
    return once(() => {
      this.#exclusive = false;
      this.#notify();
    });
  }

  #changed(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/** The transaction layer in front of one dynalite server at `url`. */
export class DynaliteTransactions {
  readonly #url: string;
  readonly #gate = new WriteGate();
  readonly #tokens = new Map<string, { hash: string; atMs: number }>();
  readonly #keySchemas = new Map<string, string[]>();

  constructor(url: string) {
    this.#url = url;
  }

  /** Routes one request: transactions here, writes through the gate, the rest straight to dynalite. */
  route(request: IncomingMessage, response: ServerResponse, dispatch: Dispatch): void {
    if (request.headers[INTERNAL_HEADER] !== undefined) {
      dispatch(request, response);
      return;
    }
    const target = String(request.headers['x-amz-target'] ?? '');
    const action = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
    if (action === 'TransactWriteItems') {
      void this.#transact(request, response);
      return;
    }
    if (!WRITE_TARGETS.has(action)) {
      dispatch(request, response);
      return;
    }
    void this.#gate.shared().then((release) => {
      response.once('finish', release);
      response.once('close', release);
      dispatch(request, response);
    });
  }

  async #transact(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let text = '';
    try {
      for await (const chunk of request) text += String(chunk);
    } catch {
      return;
    }
    const headers = forwardedHeaders(request);
    const release = await this.#gate.exclusive();
    try {
      const answer = await this.#apply(JSON.parse(text) as Json, headers);
      respond(response, answer.status, answer.body);
    } catch (error) {
      respond(response, 500, {
        __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
        message: `the local transaction emulation failed: ${(error as Error).message}`,
      });
    } finally {
      release();
    }
  }

  async #apply(body: Json, headers: Record<string, string>): Promise<{ status: number; body: Json }> {
    const now = Date.now();
    for (const [token, seen] of this.#tokens)
      if (now - seen.atMs > TOKEN_MEMORY_MS) this.#tokens.delete(token);
    const token = typeof body.ClientRequestToken === 'string' ? body.ClientRequestToken : undefined;
    const { ClientRequestToken: _token, ...rest } = body;
    const hash = createHash('sha256').update(JSON.stringify(rest)).digest('hex');
    if (token !== undefined) {
      const seen = this.#tokens.get(token);
      if (seen && seen.hash === hash) return { status: 200, body: {} };
      if (seen) {
        return error(
          400,
          'IdempotentParameterMismatchException',
          'ClientRequestToken was used with another request',
        );
      }
    }
    const actions = Array.isArray(body.TransactItems) ? (body.TransactItems as Json[]) : [];
    if (actions.length === 0 || actions.length > 100) {
      return error(400, 'ValidationException', 'TransactItems must hold 1 to 100 actions');
    }
    const undo: { table: string; key: Json; old: Json | undefined }[] = [];
    for (const [index, action] of actions.entries()) {
      const [kind, params] = Object.entries(action)[0] as [string, Json];
      const table = String(params.TableName);
      const key =
        kind === 'Put' ? await this.#keyOf(table, params.Item as Json, headers) : (params.Key as Json);
      const old = (await this.#call('GetItem', { TableName: table, Key: key, ConsistentRead: true }, headers))
        .body.Item as Json | undefined;
      const answer = await this.#call(...singleWrite(kind, params, key, old), headers);
      if (answer.status === 200) {
        // A condition check writes nothing: the item put to check it goes again.
        if (kind === 'ConditionCheck' && old === undefined) {
          await this.#call('DeleteItem', { TableName: table, Key: key }, headers);
        } else {
          undo.push({ table, key, old });
        }
        continue;
      }
      await this.#rollback(undo, headers);
      if (String(answer.body.__type ?? '').endsWith('ConditionalCheckFailedException')) {
        const reasons = actions.map((_a, i) =>
          i === index
            ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }
            : { Code: 'None' },
        );
        return {
          status: 400,
          body: {
            __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
            message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
            CancellationReasons: reasons,
          },
        };
      }
      return { status: answer.status, body: answer.body };
    }
    if (token !== undefined) this.#tokens.set(token, { hash, atMs: now });
    return { status: 200, body: {} };
  }

  async #rollback(
    undo: readonly { table: string; key: Json; old: Json | undefined }[],
    headers: Record<string, string>,
  ) {
    for (const { table, key, old } of [...undo].reverse()) {
      if (old === undefined) await this.#call('DeleteItem', { TableName: table, Key: key }, headers);
      else await this.#call('PutItem', { TableName: table, Item: old }, headers);
    }
  }

  /** The key attributes of `item` on `table` (DescribeTable, once per table). */
  async #keyOf(table: string, item: Json, headers: Record<string, string>): Promise<Json> {
    let names = this.#keySchemas.get(table);
    if (names === undefined) {
      const described = await this.#call('DescribeTable', { TableName: table }, headers);
      const schema = ((described.body.Table as Json | undefined)?.KeySchema ?? []) as {
        AttributeName: string;
      }[];
      names = schema.map((k) => k.AttributeName);
      this.#keySchemas.set(table, names);
    }
    return Object.fromEntries(names.map((name) => [name, item[name]]));
  }

  async #call(
    action: string,
    params: Json,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: Json }> {
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `${TARGET_PREFIX}${action}`,
        [INTERNAL_HEADER]: '1',
      },
      body: JSON.stringify(params),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
  }
}

/** The single-item write one transaction action is applied as. */
function singleWrite(kind: string, params: Json, key: Json, old: Json | undefined): [string, Json] {
  const { TableName, ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues } = params;
  const common = {
    TableName,
    ...(ConditionExpression === undefined ? {} : { ConditionExpression }),
    ...(ExpressionAttributeNames === undefined ? {} : { ExpressionAttributeNames }),
    ...(ExpressionAttributeValues === undefined ? {} : { ExpressionAttributeValues }),
  };
  switch (kind) {
    case 'Put':
      return ['PutItem', { ...common, Item: params.Item }];
    case 'Update':
      return ['UpdateItem', { ...common, Key: key, UpdateExpression: params.UpdateExpression }];
    case 'Delete':
      return ['DeleteItem', { ...common, Key: key }];
    default:
      // ConditionCheck: the item written back as it is, under the condition (absent: rolled back by
      // the undo list, which deletes what was not there before).
      return ['PutItem', { ...common, Item: old ?? key }];
  }
}

/** The caller's headers dynalite looks at (its authorization check), for the calls made for it. */
function forwardedHeaders(request: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['authorization', 'x-amz-date', 'x-amz-security-token']) {
    const value = request.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

function error(status: number, type: string, message: string): { status: number; body: Json } {
  return { status, body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message } };
}

function respond(response: ServerResponse, status: number, body: Json): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  response.end(text);
}
