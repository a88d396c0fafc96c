/**
 * The client's calls on the state item of a job sent for later (lib/core/scheduled-job.ts): its
 * conditional create, cancel and generation change, and its strongly consistent read. Loaded
 * only when a job is sent for later, cancelled or rescheduled (with `@aws-sdk/client-dynamodb`).
 *
 * DynamoDB rules relied on (developer guide / API reference pages):
 * - A conditional write is evaluated atomically against the item at write time; a false
 *   condition fails with `ConditionalCheckFailedException` and changes nothing
 *   (WorkingWithItems.html#WorkingWithItems.ConditionalUpdate).
 * - `GetItem` with `ConsistentRead: true` sees every write that succeeded before it.
 * - TTL deletes lazily: an item past its `expiresAt` is treated as absent by comparing it.
 * - `state`, `type`, `source` and `queue` are reserved words: every name goes through an alias.
 */
import {
  type AttributeValue,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  isExpiredState,
  parseScheduledJobItem,
  type ScheduledJobState,
  type ScheduledVia,
  scheduledJobItem,
} from '../core/scheduled-job.ts';
import { JobClientError } from './job-client-error.ts';
import type { DynamoDbSender } from './scheduling.ts';

/** Whether an SDK error is a failed condition. */
function isConditionFailure(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

/** A write's outcome: done, or the item as it is (undefined: absent or expired). */
export type StateWrite =
  | { readonly ok: true; readonly state: ScheduledJobState }
  | { readonly ok: false; readonly existing: ScheduledJobState | undefined };

/** The change of a reschedule: the new time and how the new generation travels. */
export interface GenerationChange {
  readonly runAt: string;
  readonly runAtMs: number;
  readonly via: ScheduledVia;
  /** The schedule of the new generation; absent when it goes with `DelaySeconds`. */
  readonly scheduleName?: string;
  readonly expiresAt: number;
}

/** The state items of one table. */
export class ScheduledStateTable {
  readonly #client: DynamoDbSender;
  readonly #tableName: string;
  readonly #now: () => number;

  constructor(client: DynamoDbSender, tableName: string, now: () => number) {
    this.#client = client;
    this.#tableName = tableName;
    this.#now = now;
  }

  /**
   * A DynamoDB call; a missing table becomes an error naming it and what to set (the SDK's own
   * message says only "Requested resource not found").
   * @throws {JobClientError} `ResourceNotFoundException` when the table does not exist in the client's account and region.
   */
  // biome-ignore lint/suspicious/noExplicitAny: any DynamoDB command.
  async #send(command: any): Promise<unknown> {
    try {
      return await this.#client.send(command);
    } catch (error) {
      if ((error as { name?: unknown } | null)?.name !== 'ResourceNotFoundException') throw error;
      throw new JobClientError(
        `the idempotency table "${this.#tableName}" (scheduling.idempotencyTableName, JOBS_IDEMPOTENCY_TABLE) does not exist in this account and region: it keeps the state of jobs sent for later; give the JobQueue's idempotency table (its name is the stack output IdempotencyTableName; jobQueue.grantScheduleJobs(fn) sets it), and check the client's region (AWS_REGION)`,
        { code: 'ResourceNotFoundException', senderFault: true, cause: error },
      );
    }
  }

  /** One strongly consistent GetItem; an absent or expired item is undefined. */
  async read(pk: string): Promise<ScheduledJobState | undefined> {
    const output = (await this.#send(
      new GetItemCommand({ TableName: this.#tableName, Key: { pk: { S: pk } }, ConsistentRead: true }),
    )) as { Item?: Record<string, AttributeValue> } | undefined;
    if (output?.Item === undefined) return undefined;
    const state = parseScheduledJobItem(output.Item);
    return isExpiredState(state, this.#now()) ? undefined : state;
  }

  /** PutItem of a new pending item, unless one that has not expired is there (then read it: a retry, or another send of the same id). */
  async create(state: ScheduledJobState): Promise<StateWrite> {
    try {
      await this.#send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: scheduledJobItem(state),
          ConditionExpression: 'attribute_not_exists(pk) OR #expiresAt <= :nowSeconds',
          ExpressionAttributeNames: { '#expiresAt': 'expiresAt' },
          ExpressionAttributeValues: { ':nowSeconds': { N: String(Math.floor(this.#now() / 1000)) } },
        }),
      );
      return { ok: true, state };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { ok: false, existing: await this.read(state.pk) };
    }
  }

  /** UpdateItem `state = cancelled` if the item is pending, of `queue`, and has not expired. */
  async cancel(pk: string, queue: string): Promise<StateWrite> {
    return this.#update(pk, {
      UpdateExpression: 'SET #state = :cancelled, #cancelledAtMs = :now',
      ConditionExpression: '#state = :pending AND #queue = :queue AND #expiresAt > :nowSeconds',
      ExpressionAttributeNames: {
        '#state': 'state',
        '#queue': 'queue',
        '#cancelledAtMs': 'cancelledAtMs',
        '#expiresAt': 'expiresAt',
      },
      ExpressionAttributeValues: {
        ':queue': { S: queue },
        ':cancelled': { S: 'cancelled' },
        ':pending': { S: 'pending' },
        ':now': { N: String(this.#now()) },
        ':nowSeconds': { N: String(Math.floor(this.#now() / 1000)) },
      },
    });
  }

  /**
   * UpdateItem to `generation + 1` with the new time, if the item is pending at `fromGeneration`:
   * from then on a message of an older generation is superseded.
   */
  async advance(pk: string, fromGeneration: number, change: GenerationChange): Promise<StateWrite> {
    return this.#setGeneration(pk, fromGeneration, fromGeneration + 1, change);
  }

  /**
   * Puts a pending item back to its previous generation and time after a reschedule whose new
   * generation could not be sent (conditional on still being at the new generation).
   */
  async restore(pk: string, currentGeneration: number, previous: ScheduledJobState): Promise<StateWrite> {
    return this.#setGeneration(pk, currentGeneration, previous.generation, previous);
  }

  /**
   * Expires a pending item of `generation` now (`expiresAt` = now, in seconds): from then on it
   * counts as absent (the next send of the id may write it again) and TTL deletes it. Used when a
   * send's schedule could not be created. UpdateItem, not DeleteItem: the producer's grant has no
   * delete.
   */
  async expire(pk: string, generation: number): Promise<StateWrite> {
    return this.#update(pk, {
      UpdateExpression: 'SET #expiresAt = :nowSeconds',
      ConditionExpression: '#state = :pending AND #generation = :g',
      ExpressionAttributeNames: { '#expiresAt': 'expiresAt', '#state': 'state', '#generation': 'generation' },
      ExpressionAttributeValues: {
        ':nowSeconds': { N: String(Math.floor(this.#now() / 1000)) },
        ':pending': { S: 'pending' },
        ':g': { N: String(generation) },
      },
    });
  }

  /** Sets the schedule of the current generation (a reschedule that had to create a new one). */
  async setSchedule(pk: string, generation: number, scheduleName: string): Promise<StateWrite> {
    return this.#update(pk, {
      UpdateExpression: 'SET #via = :schedule, #scheduleName = :name',
      ConditionExpression: '#state = :pending AND #generation = :g',
      ExpressionAttributeNames: {
        '#via': 'via',
        '#scheduleName': 'scheduleName',
        '#state': 'state',
        '#generation': 'generation',
      },
      ExpressionAttributeValues: {
        ':schedule': { S: 'schedule' },
        ':name': { S: scheduleName },
        ':pending': { S: 'pending' },
        ':g': { N: String(generation) },
      },
    });
  }

  async #setGeneration(
    pk: string,
    fromGeneration: number,
    toGeneration: number,
    change: GenerationChange,
  ): Promise<StateWrite> {
    const names: Record<string, string> = {
      '#state': 'state',
      '#generation': 'generation',
      '#runAt': 'runAt',
      '#runAtMs': 'runAtMs',
      '#via': 'via',
      '#expiresAt': 'expiresAt',
      '#scheduleName': 'scheduleName',
    };
    const values: Record<string, AttributeValue> = {
      ':pending': { S: 'pending' },
      ':from': { N: String(fromGeneration) },
      ':to': { N: String(toGeneration) },
      ':runAt': { S: change.runAt },
      ':runAtMs': { N: String(change.runAtMs) },
      ':via': { S: change.via },
      ':expiresAt': { N: String(change.expiresAt) },
    };
    let update =
      'SET #generation = :to, #runAt = :runAt, #runAtMs = :runAtMs, #via = :via, #expiresAt = :expiresAt';
    if (change.scheduleName === undefined) update += ' REMOVE #scheduleName';
    else {
      update += ', #scheduleName = :scheduleName';
      values[':scheduleName'] = { S: change.scheduleName };
    }
    return this.#update(pk, {
      UpdateExpression: update,
      ConditionExpression: '#state = :pending AND #generation = :from',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  async #update(
    pk: string,
    expression: {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, AttributeValue>;
    },
  ): Promise<StateWrite> {
    try {
      const output = (await this.#send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: { pk: { S: pk } },
          ...expression,
          ReturnValues: 'ALL_NEW',
        }),
      )) as { Attributes?: Record<string, AttributeValue> } | undefined;
      if (output?.Attributes === undefined) {
        const state = await this.read(pk);
        return state === undefined ? { ok: false, existing: undefined } : { ok: true, state };
      }
      return { ok: true, state: parseScheduledJobItem(output.Attributes) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return { ok: false, existing: await this.read(pk) };
    }
  }
}
