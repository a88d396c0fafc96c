/**
 * What flow control adds per job, on dynalite (issue 18, docs/cost.md "Flow control"): the
 * latency of a concurrency slot (acquire + release, uncontended) and of a rate-limit token (one
 * instance; two instances alternating on one bucket), with the DynamoDB calls each made; and the
 * largest rate one limit sustained: 8 instances (one client each) taking tokens of one bucket as
 * fast as they can for 3 s, next to what dynalite itself sustains for plain writes to one item.
 * Figures, not assertions. Run: `node --import tsx bench/limits.ts`.
 */
import { performance } from 'node:perf_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { defineRateLimit } from '../lib/runtime/limits/rate-limit.ts';
import { LimitStore } from '../lib/runtime/limits/store.ts';
import { createClient, startDynalite } from '../test/support/dynalite.ts';

/** A client that counts the commands it sends, by name. */
function counted(client: DynamoDBClient): { client: DynamoDBClient; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const send = client.send.bind(client);
  (client as { send: unknown }).send = (command: { constructor: { name: string } }) => {
    const name = command.constructor.name.replace(/Command$/, '');
    calls.set(name, (calls.get(name) ?? 0) + 1);
    return send(command as never);
  };
  return { client, calls };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function perJob(calls: Map<string, number>, jobs: number): string {
  return [...calls].map(([name, n]) => `${name} ${(n / jobs).toFixed(2)}`).join(', ');
}

const db = await startDynalite();
try {
  const tableName = await db.createTable();
  const jobs = 300;

  // 1. Concurrency: acquire + release per job, one key, limit 2, nothing else running.
  {
    const { client, calls } = counted(createClient(db.endpoint));
    const store = new LimitStore({ tableName, client });
    const times: number[] = [];
    for (let i = 0; i < jobs; i++) {
      const start = performance.now();
      const taken = await store.slots.acquire({
        name: 'bench',
        key: 'k',
        limit: 2,
        expiresAtMs: Date.now() + 30_000,
      });
      if (taken.status !== 'acquired') throw new Error('the slot should be free');
      await taken.slot.release();
      times.push(performance.now() - start);
    }
    console.log(
      `concurrency slot, acquire + release: median ${median(times).toFixed(2)} ms; calls per job: ${perJob(calls, jobs)}`,
    );
  }

  // 2. Rate limit, one instance: one conditional UpdateItem per token while the bucket holds tokens.
  {
    const { client, calls } = counted(createClient(db.endpoint));
    const store = new LimitStore({ tableName, client });
    const limit = defineRateLimit({ name: 'bench-one', perSecond: 1_000_000, burst: 1_000_000 });
    const times: number[] = [];
    for (let i = 0; i < jobs; i++) {
      const start = performance.now();
      const taken = await store.buckets.take(limit, 'k');
      if (!taken.granted) throw new Error('a token should be there');
      times.push(performance.now() - start);
    }
    console.log(
      `rate-limit token, one instance: median ${median(times).toFixed(2)} ms; calls per job: ${perJob(calls, jobs)}`,
    );
  }

  // 3. Rate limit, two instances alternating on one bucket (no read: the take is one atomic update).
  {
    const a = counted(createClient(db.endpoint));
    const b = counted(createClient(db.endpoint));
    const stores = [
      new LimitStore({ tableName, client: a.client }),
      new LimitStore({ tableName, client: b.client }),
    ];
    const limit = defineRateLimit({ name: 'bench-two', perSecond: 1_000_000, burst: 1_000_000 });
    const times: number[] = [];
    for (let i = 0; i < jobs; i++) {
      const start = performance.now();
      const taken = await (stores[i % 2] as LimitStore).buckets.take(limit, 'k');
      if (!taken.granted) throw new Error('a token should be there');
      times.push(performance.now() - start);
    }
    const calls = new Map<string, number>();
    for (const [name, n] of [...a.calls, ...b.calls]) calls.set(name, (calls.get(name) ?? 0) + n);
    console.log(
      `rate-limit token, two instances alternating: median ${median(times).toFixed(2)} ms; calls per job: ${perJob(calls, jobs)}`,
    );
  }

  // 4. Largest rate one limit sustained: 8 instances, each 4 takers in flight, for 3 s.
  {
    const limit = defineRateLimit({
      name: 'bench-max',
      perSecond: 1_000_000,
      burst: 1_000_000,
      adaptive: false,
    });
    const instances = Array.from(
      { length: 8 },
      () => new LimitStore({ tableName, client: createClient(db.endpoint) }),
    );
    const until = performance.now() + 3_000;
    let granted = 0;
    let refused = 0;
    const taker = async (store: LimitStore) => {
      while (performance.now() < until) {
        const taken = await store.buckets.take(limit, 'k');
        if (taken.granted) granted += 1;
        else refused += 1;
      }
    };
    const started = performance.now();
    await Promise.all(instances.flatMap((store) => Array.from({ length: 4 }, () => taker(store))));
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `one limit, 8 instances x 4 takers: ${(granted / seconds).toFixed(0)} tokens/s granted (${(refused / seconds).toFixed(0)}/s were told to wait)`,
    );
  }

  // 5. Baseline: what dynalite itself sustains for the same shape of call (an UpdateItem on one
  // item, 32 in flight, no condition), so row 4 reads against the emulator's own ceiling.
  {
    const { UpdateItemCommand } = await import('@aws-sdk/client-dynamodb');
    const clients = Array.from({ length: 8 }, () => createClient(db.endpoint));
    const until = performance.now() + 3_000;
    let writes = 0;
    const writer = async (client: DynamoDBClient) => {
      while (performance.now() < until) {
        await client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { pk: { S: 'bench-baseline' } },
            UpdateExpression: 'ADD n :one',
            ExpressionAttributeValues: { ':one': { N: '1' } },
          }),
        );
        writes += 1;
      }
    };
    const started = performance.now();
    await Promise.all(clients.flatMap((client) => Array.from({ length: 4 }, () => writer(client))));
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `dynalite baseline, plain UpdateItem on one item, 32 in flight: ${(writes / seconds).toFixed(0)} writes/s`,
    );
  }
} finally {
  await db.stop();
}
