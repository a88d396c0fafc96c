/**
 * Stopping the embedded DynamoDB emulator while it is still handling requests (a local run that
 * ends at its deadline with function threads mid-request) must neither crash the process
 * (dynalite throws `Database is closed` from a callback when its database closes under a
 * running handler: an uncaught exception) nor hang.
 */
import { connect } from 'node:net';
import { DynamoDBClient, ListTablesCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { startDynalite } from '../support/dynalite.ts';

describe('startDynalite().stop()', () => {
  it('waits for the requests it is handling, then closes: no uncaught error, every request answered or refused', async () => {
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      for (let round = 0; round < 5; round++) {
        const db = await startDynalite();
        const tableName = await db.createTable();
        const client = new DynamoDBClient({
          endpoint: db.endpoint,
          region: 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          maxAttempts: 1,
        });
        const writes = Array.from({ length: 100 }, (_, i) =>
          client.send(
            new PutItemCommand({
              TableName: tableName,
              Item: { pk: { S: `k-${i}` } },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        );
        // Stop once the first write was answered: the others are queued or being handled.
        await Promise.race(writes);
        await db.stop();
        const settled = await Promise.allSettled(writes);
        client.destroy();
        expect(settled.length).toBe(100);
      }
      // An uncaught exception from a closing handler surfaces on a later turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it('does not wait for a request whose connection went away before its body arrived (nothing of it runs)', async () => {
    const db = await startDynalite();
    const { hostname, port } = new URL(db.endpoint);
    const socket = connect({ host: hostname, port: Number(port) });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.on('error', () => {});
    // Headers and half a body: the server has a request whose handler has not started.
    socket.write(
      `POST / HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/x-amz-json-1.0\r\n` +
        'X-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Length: 2\r\n\r\n{',
    );
    // The server answers the first byte of a second request only when the first is parsed: give
    // it a round trip through a real request on another connection, then cut the half one.
    const client = new DynamoDBClient({
      endpoint: db.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    await client.send(new ListTablesCommand({}));
    client.destroy();
    socket.destroy();
    // Before: stop waited for that request to end (up to its drain limit); now it returns.
    await db.stop();
  }, 20_000);
});
