/**
 * The sample app's domain state on DynamoDB (the `APP_TABLE` of docs/contracts.md: partition
 * key `pk`, sort key `sk`, both String).
 *
 * Item layout (one table, single-table design):
 * | pk | sk | attributes |
 * |---|---|---|
 * | `SKU#<sku>` | `STOCK` | `stock` (Number, units left), `reservations` (String Set of booking ids that took stock) |
 * | `USER#<userId>` | `PROFILE` | `email`, `name` |
 * | `USER#<userId>` | `BOOKING#<bookingId>` | see {@link Booking} |
 * | `USER#<userId>` | `ORDER-LOG` | `entries` (List of {@link OrderLogEntry}), `logged` (String Set of `<bookingId>#<step>`) |
 * | `USER#<userId>` | `HOLD#<holdId>` | see {@link Hold}: a reservation hold and every run of its expiry job (`runs`, and `runIds`: String Set of the runs logged) |
 * | `RUN-LOG#<jobType>` | `<jobId>` | `runs` (List of {@link JobRunEntry}): every run of a job that records its runs (the nightly invoice run); `runIds` (String Set of the runs logged) |
 *
 * Every write here is idempotent on its own (a conditional write that recognises its own earlier
 * success), so a job that runs twice leaves the same state as a job that ran once. DynamoDB has
 * no transactions in the local emulator (dynalite), so no write here needs one.
 *
 * Reserved words (`status`, `name`, ...) go through expression attribute names
 * (DynamoDB developer guide, "Reserved words in DynamoDB").
 *
 * Why one file: it is the sample's one table; each item kind's writes and reads sit beside the
 * layout above.
 */
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { PermanentError } from 'sqs-jobs';

/** Lifecycle of a booking, in the order the FIFO chain moves it. */
export type BookingStatus = 'PENDING' | 'RESERVED' | 'CONFIRMED' | 'INVOICED';

/** The booking steps run by the FIFO `booking` queue, in order. */
export const BOOKING_STEPS = ['reserve', 'confirm', 'invoice'] as const;
/** One step of the booking chain. */
export type BookingStep = (typeof BOOKING_STEPS)[number];

/** A booking as stored (item `USER#<userId>` / `BOOKING#<bookingId>`). */
export interface Booking {
  readonly bookingId: string;
  readonly userId: string;
  readonly sku: string;
  /** Units of `sku` booked, integer >= 1. */
  readonly quantity: number;
  /** Price in cents, charged by `payments.capture`. */
  readonly amountCents: number;
  /** Position of this booking among the user's bookings (1-based): the order they were placed in. */
  readonly ordinal: number;
  readonly status: BookingStatus;
  /** Invoice id returned by the invoice API, once issued. */
  readonly invoiceId?: string;
  /** Payment id returned by the payment API, once captured. */
  readonly paymentId?: string;
  /** When the capture was recorded, epoch ms. */
  readonly paymentAtMs?: number;
  /** Attempt number of the run that recorded the capture. */
  readonly paymentAttempt?: number;
  /** Message id returned by the mail API, once the confirmation email was sent. */
  readonly emailId?: string;
  /** When the email was recorded, epoch ms. */
  readonly emailAtMs?: number;
  /** Attempt number of the run that recorded the email. */
  readonly emailAttempt?: number;
  /** When the booking was confirmed, epoch ms (set by the confirm step). */
  readonly confirmedAtMs?: number;
}

/** A user profile (item `USER#<userId>` / `PROFILE`). */
export interface UserProfile {
  readonly userId: string;
  readonly email: string;
  readonly name: string;
}

/** A stock keeping unit's stock (item `SKU#<sku>` / `STOCK`). */
export interface Stock {
  readonly sku: string;
  /** Units left. */
  readonly stock: number;
  /** Booking ids that reserved stock. */
  readonly reservations: readonly string[];
}

/** One booking step as it happened: evidence of the per-user order on the FIFO queue. */
export interface OrderLogEntry {
  readonly bookingId: string;
  /** The booking's {@link Booking.ordinal}. */
  readonly ordinal: number;
  readonly step: BookingStep;
  /** When the step was recorded, epoch ms. */
  readonly atMs: number;
  /** Attempt number of the run that recorded it (1 = first run). */
  readonly attempt: number;
}

/** The order log of one user (item `USER#<userId>` / `ORDER-LOG`). */
export interface OrderLog {
  readonly userId: string;
  /** In the order the steps were recorded. */
  readonly entries: readonly OrderLogEntry[];
}

/** Lifecycle of a reservation hold: held until confirmed or until its expiry job releases it. */
export type HoldStatus = 'HELD' | 'CONFIRMED' | 'EXPIRED';

/** One run of a job, as the job recorded it: the evidence that a job ran, when, and how often. */
export interface JobRunEntry {
  /** The envelope id of the job that ran. */
  readonly jobId: string;
  /** When the run started, epoch ms. */
  readonly atMs: number;
  /** Attempt number of the run (1 = first delivery of its message). */
  readonly attempt: number;
  /**
   * Identity of the run: a new random id per execution of the job's `run`. The log keeps one
   * entry per run id, so a log write that DynamoDB applied but whose response was lost (retried
   * by the SDK) leaves one entry, and two entries are two runs.
   */
  readonly runId: string;
}

/**
 * A reservation hold (item `USER#<userId>` / `HOLD#<holdId>`): taken when a booking is made, it
 * expires (its expiry job releases it) unless the booking is confirmed first (the expiry job is
 * then cancelled).
 */
export interface Hold {
  readonly holdId: string;
  readonly userId: string;
  /** The booking the hold is for. */
  readonly bookingId: string;
  readonly status: HoldStatus;
  /** When the hold was taken, epoch ms. */
  readonly heldAtMs: number;
  /** When the booking confirmed it, epoch ms. */
  readonly confirmedAtMs?: number;
  /** When its expiry job released it, epoch ms. */
  readonly expiredAtMs?: number;
  /** Every run of its expiry job that reached the hold, in order (a cancelled hold has none). */
  readonly runs: readonly JobRunEntry[];
}

/** Everything in the table, grouped: what the report reads at the end of a run. */
export interface DomainSnapshot {
  readonly stocks: readonly Stock[];
  readonly users: readonly UserProfile[];
  readonly bookings: readonly Booking[];
  readonly orderLogs: readonly OrderLog[];
}

// Names are spelled out: a minified bundle renames classes, and `name` is the DLQ evidence
// (`ErrorName`, and `ErrorReason` for permanent errors) operators group by.

/** A booking that does not exist (or no longer does): a retry cannot fix it. */
export class BookingNotFoundError extends PermanentError {
  override name = 'BookingNotFoundError';
}
/** Not enough stock left for a booking: permanent, straight to the dead-letter queue. */
export class OutOfStockError extends PermanentError {
  override name = 'OutOfStockError';
}
/** A hold that does not exist: a retry cannot fix it. */
export class HoldNotFoundError extends PermanentError {
  override name = 'HoldNotFoundError';
}
/** A booking step found the booking in a state the step cannot start from. */
export class BookingStateError extends PermanentError {
  override name = 'BookingStateError';
}

/** Sort key prefix of booking items. */
const BOOKING_PREFIX = 'BOOKING#';
/** Sort key prefix of hold items. */
const HOLD_PREFIX = 'HOLD#';
/** Partition key prefix of run logs. */
const RUN_LOG_PREFIX = 'RUN-LOG#';
/** Attributes of a run log (a hold's, a `RUN-LOG#` item's): the entries, and the run ids logged. */
const RUN_LOG_NAMES = { list: 'runs', markers: 'runIds' } as const;

const userPk = (userId: string): string => `USER#${userId}`;
const skuPk = (sku: string): string => `SKU#${sku}`;

/** Statuses a booking may have when a step runs (a re-run finds its own step's status). */
const STEP_FROM: Record<BookingStep, readonly BookingStatus[]> = {
  reserve: ['PENDING', 'RESERVED'],
  confirm: ['RESERVED', 'CONFIRMED'],
  invoice: ['CONFIRMED', 'INVOICED'],
};

/** Status a booking has after a step. */
export const STEP_TO: Record<BookingStep, BookingStatus> = {
  reserve: 'RESERVED',
  confirm: 'CONFIRMED',
  invoice: 'INVOICED',
};

function isConditionFailure(err: unknown): boolean {
  return (
    err instanceof ConditionalCheckFailedException ||
    (err as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException'
  );
}

/** Options of {@link DomainRepository}. */
export interface DomainRepositoryOptions {
  /** Name of the domain table (`APP_TABLE`). */
  readonly tableName: string;
  /** A document client; @default one built from the environment (region, `AWS_ENDPOINT_URL`). */
  readonly client?: DynamoDBDocumentClient;
}

/**
 * Reads and writes the sample app's domain state. Transport errors of the SDK propagate as they
 * are (the worker's `classifyError` knows them); domain failures are {@link PermanentError}s.
 */
export class DomainRepository {
  readonly tableName: string;
  readonly #client: DynamoDBDocumentClient;

  constructor(options: DomainRepositoryOptions) {
    this.tableName = options.tableName;
    this.#client =
      options.client ??
      DynamoDBDocumentClient.from(new DynamoDBClient({}), {
        marshallOptions: { removeUndefinedValues: true },
      });
  }

  /**
   * Loads a booking (strongly consistent: the previous step of the chain just wrote it).
   * @throws {BookingNotFoundError} when there is no such booking.
   */
  async getBooking(userId: string, bookingId: string, signal?: AbortSignal): Promise<Booking> {
    const out = await this.#client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: userPk(userId), sk: `${BOOKING_PREFIX}${bookingId}` },
        ConsistentRead: true,
      }),
      { abortSignal: signal },
    );
    if (!out.Item) {
      throw new BookingNotFoundError(`booking ${bookingId} of user ${userId} not found`, {
        context: { userId, bookingId },
      });
    }
    return toBooking(out.Item);
  }

  /**
   * Loads a user profile.
   * @throws {PermanentError} when there is no such user.
   */
  async getUser(userId: string, signal?: AbortSignal): Promise<UserProfile> {
    const out = await this.#client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: userPk(userId), sk: 'PROFILE' } }),
      { abortSignal: signal },
    );
    if (!out.Item) throw new PermanentError(`user ${userId} not found`, { context: { userId } });
    return { userId, email: String(out.Item.email), name: String(out.Item.name) };
  }

  /**
   * Takes `quantity` units of `sku` for a booking: one conditional UpdateItem that decrements
   * `stock` only when enough is left and this booking has not taken stock yet (the booking id
   * joins the `reservations` set in the same write). Running it twice takes stock once.
   *
   * @returns `reserved` when this call took the stock, `already-reserved` when an earlier run did.
   * @throws {OutOfStockError} when less than `quantity` is left (or the SKU does not exist).
   */
  async reserveStock(
    sku: string,
    bookingId: string,
    quantity: number,
    signal?: AbortSignal,
  ): Promise<'reserved' | 'already-reserved'> {
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: skuPk(sku), sk: 'STOCK' },
          UpdateExpression: 'SET stock = stock - :q ADD reservations :ids',
          // stock >= :q guards against overselling; NOT contains(...) against a second decrement by a re-run.
          ConditionExpression:
            'attribute_exists(stock) AND stock >= :q AND (attribute_not_exists(reservations) OR NOT contains(reservations, :id))',
          ExpressionAttributeValues: { ':q': quantity, ':ids': new Set([bookingId]), ':id': bookingId },
        }),
        { abortSignal: signal },
      );
      return 'reserved';
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      const current = await this.getStock(sku, signal);
      if (current?.reservations.includes(bookingId)) return 'already-reserved';
      throw new OutOfStockError(
        `out of stock: ${sku} has ${current?.stock ?? 0} left, booking ${bookingId} needs ${quantity}`,
        { context: { sku, bookingId, quantity, stock: current?.stock ?? 0 } },
      );
    }
  }

  /** Reads a SKU's stock (strongly consistent); undefined when the SKU does not exist. */
  async getStock(sku: string, signal?: AbortSignal): Promise<Stock | undefined> {
    const out = await this.#client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: skuPk(sku), sk: 'STOCK' },
        ConsistentRead: true,
      }),
      { abortSignal: signal },
    );
    return out.Item ? toStock(out.Item) : undefined;
  }

  /**
   * Moves a booking to the status after `step` (conditional on the status it may come from; a
   * re-run that finds the target status already set succeeds). Extra attributes are set only when
   * absent, so a re-run never overwrites what the first run recorded.
   *
   * @throws {BookingNotFoundError} when the booking does not exist.
   * @throws {BookingStateError} when the booking is in a status the step cannot start from.
   */
  async advance(
    booking: Pick<Booking, 'userId' | 'bookingId'>,
    step: BookingStep,
    extra: Readonly<Record<string, string | number>> = {},
    signal?: AbortSignal,
  ): Promise<void> {
    const from = STEP_FROM[step];
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = { ':to': STEP_TO[step] };
    from.forEach((status, i) => {
      values[`:from${i}`] = status;
    });
    const sets = ['#status = :to'];
    Object.entries(extra).forEach(([key, value], i) => {
      names[`#x${i}`] = key;
      values[`:x${i}`] = value;
      sets.push(`#x${i} = if_not_exists(#x${i}, :x${i})`);
    });
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: userPk(booking.userId), sk: `${BOOKING_PREFIX}${booking.bookingId}` },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `attribute_exists(pk) AND #status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
        { abortSignal: signal },
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      const current = await this.getBooking(booking.userId, booking.bookingId, signal);
      throw new BookingStateError(
        `booking ${booking.bookingId} is ${current.status}; step ${step} needs ${from.join(' or ')}`,
        { context: { bookingId: booking.bookingId, status: current.status, step } },
      );
    }
  }

  /**
   * Records fields on a booking once: each field is set only when absent (`if_not_exists`), so a
   * duplicate run keeps what the first recorded. Used for payment and email evidence.
   * @throws {BookingNotFoundError} when the booking does not exist.
   */
  async recordOnBooking(
    booking: Pick<Booking, 'userId' | 'bookingId'>,
    fields: Readonly<Record<string, string | number>>,
    signal?: AbortSignal,
  ): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    Object.entries(fields).forEach(([key, value], i) => {
      names[`#f${i}`] = key;
      values[`:f${i}`] = value;
      sets.push(`#f${i} = if_not_exists(#f${i}, :f${i})`);
    });
    if (sets.length === 0) return;
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: userPk(booking.userId), sk: `${BOOKING_PREFIX}${booking.bookingId}` },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
        { abortSignal: signal },
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      throw new BookingNotFoundError(`booking ${booking.bookingId} of user ${booking.userId} not found`, {
        context: { userId: booking.userId, bookingId: booking.bookingId },
      });
    }
  }

  /**
   * Appends a step to the user's order log, once per booking and step: the `logged` set makes a
   * second append of the same step a no-op, so the log shows each step where it first happened.
   * @returns false when the step was already logged.
   */
  async appendOrderLog(userId: string, entry: OrderLogEntry, signal?: AbortSignal): Promise<boolean> {
    const appended = await this.#appendOnce(
      { pk: userPk(userId), sk: 'ORDER-LOG' },
      { list: 'entries', markers: 'logged' },
      entry,
      `${entry.bookingId}#${entry.step}`,
      { itemMustExist: false, signal },
    );
    return appended === 'appended';
  }

  /**
   * Appends `entry` to the List `names.list` of an item, once per `marker` (kept in the String
   * Set `names.markers`): one conditional UpdateItem. A plain `list_append` is not idempotent: a
   * write DynamoDB applied whose response was lost (a 500, a dropped connection) is sent again by
   * the SDK's retry and would append twice.
   * @returns `appended`; `already` (this marker was appended before: by this call's own retried
   *   write, or an earlier call); `no-item` (`itemMustExist` and there is no such item).
   */
  async #appendOnce(
    key: { pk: string; sk: string },
    names: { readonly list: string; readonly markers: string },
    entry: object,
    marker: string,
    options: { readonly itemMustExist: boolean; readonly signal?: AbortSignal | undefined },
  ): Promise<'appended' | 'already' | 'no-item'> {
    const notYet = 'attribute_not_exists(#markers) OR NOT contains(#markers, :marker)';
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression:
            'SET #list = list_append(if_not_exists(#list, :empty), :entry) ADD #markers :markers',
          ConditionExpression: options.itemMustExist ? `attribute_exists(pk) AND (${notYet})` : notYet,
          ExpressionAttributeNames: { '#list': names.list, '#markers': names.markers },
          ExpressionAttributeValues: {
            ':empty': [],
            ':entry': [{ ...entry }],
            ':markers': new Set([marker]),
            ':marker': marker,
          },
        }),
        { abortSignal: options.signal },
      );
      return 'appended';
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    if (!options.itemMustExist) return 'already';
    const out = await this.#client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
      { abortSignal: options.signal },
    );
    return out.Item === undefined ? 'no-item' : 'already';
  }

  /** Seeds (overwrites) a SKU's stock. */
  async putStock(sku: string, stock: number): Promise<void> {
    await this.#client.send(
      new PutCommand({ TableName: this.tableName, Item: { pk: skuPk(sku), sk: 'STOCK', sku, stock } }),
    );
  }

  /** Seeds (overwrites) a user profile. */
  async putUser(user: UserProfile): Promise<void> {
    await this.#client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: userPk(user.userId), sk: 'PROFILE', ...user },
      }),
    );
  }

  /** Seeds (overwrites) a booking, as the service that accepted it would before enqueuing its jobs. */
  async putBooking(booking: Booking): Promise<void> {
    await this.#client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: userPk(booking.userId), sk: `${BOOKING_PREFIX}${booking.bookingId}`, ...booking },
      }),
    );
  }

  /** Reads one user's order log (empty when no step ran yet). */
  async getOrderLog(userId: string): Promise<OrderLog> {
    const out = await this.#client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: userPk(userId), sk: 'ORDER-LOG' },
        ConsistentRead: true,
      }),
    );
    return { userId, entries: (out.Item?.entries as OrderLogEntry[] | undefined) ?? [] };
  }

  /**
   * The ids of every user with a profile, sorted: a filtered scan, fine for the sample's table (a
   * real application would page through its customer list).
   */
  async listUserIds(signal?: AbortSignal): Promise<string[]> {
    const items = await this.#scanAll('sk = :profile', { ':profile': 'PROFILE' }, signal);
    return items.map((item) => String(item.userId)).sort();
  }

  /** Lists one user's bookings. */
  async listBookings(userId: string): Promise<Booking[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': userPk(userId), ':prefix': BOOKING_PREFIX },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return items.map(toBooking);
  }

  /**
   * The bookings in `status`, of every user: a filtered scan, fine for the sample's table (a real
   * application would keep a sparse index of bookings awaiting their invoice).
   */
  async listBookingsInStatus(status: BookingStatus, signal?: AbortSignal): Promise<Booking[]> {
    const bookings: Booking[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: 'begins_with(sk, :prefix) AND #status = :status',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':prefix': BOOKING_PREFIX, ':status': status },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
        { abortSignal: signal },
      );
      bookings.push(...(out.Items ?? []).map(toBooking));
      start = out.LastEvaluatedKey;
    } while (start);
    return bookings;
  }

  /** Reads the whole table (a scan: fine for a local run of a few thousand items). */
  async snapshot(): Promise<DomainSnapshot> {
    const stocks: Stock[] = [];
    const users: UserProfile[] = [];
    const bookings: Booking[] = [];
    const orderLogs: OrderLog[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#client.send(
        new ScanCommand({ TableName: this.tableName, ExclusiveStartKey: start, ConsistentRead: true }),
      );
      for (const item of out.Items ?? []) {
        const pk = String(item.pk);
        const sk = String(item.sk);
        if (pk.startsWith('SKU#')) stocks.push(toStock(item));
        else if (sk === 'PROFILE')
          users.push({ userId: String(item.userId), email: String(item.email), name: String(item.name) });
        else if (sk.startsWith(BOOKING_PREFIX)) bookings.push(toBooking(item));
        else if (sk === 'ORDER-LOG') {
          orderLogs.push({
            userId: pk.slice('USER#'.length),
            entries: (item.entries as OrderLogEntry[]) ?? [],
          });
        }
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return { stocks, users, bookings, orderLogs };
  }

  /** Seeds (overwrites) a hold, as the booking service does when the booking is made. */
  async putHold(hold: Omit<Hold, 'runs'>): Promise<void> {
    await this.#client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: userPk(hold.userId), sk: `${HOLD_PREFIX}${hold.holdId}`, ...hold, runs: [] },
      }),
    );
  }

  /**
   * The expiry job's run on a hold: records the run on the hold (every run, once per
   * `run.runId`, so a run that should not have happened shows), then releases it if it is still
   * held (conditional `HELD` → `EXPIRED`; a re-run finds it `EXPIRED` and changes nothing).
   * @returns the hold's status after the run: `EXPIRED`, or `CONFIRMED` when the booking had
   *   confirmed it (the run then releases nothing).
   * @throws {PermanentError} `HoldNotFoundError` when there is no such hold.
   */
  async expireHold(
    userId: string,
    holdId: string,
    run: JobRunEntry,
    signal?: AbortSignal,
  ): Promise<HoldStatus> {
    const key = { pk: userPk(userId), sk: `${HOLD_PREFIX}${holdId}` };
    const logged = await this.#appendOnce(key, RUN_LOG_NAMES, run, run.runId, {
      itemMustExist: true,
      signal,
    });
    if (logged === 'no-item')
      throw new HoldNotFoundError(`hold ${holdId} of user ${userId} not found`, {
        context: { userId, holdId },
      });
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'SET #status = :expired, expiredAtMs = :at',
          ConditionExpression: '#status = :held',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':expired': 'EXPIRED', ':held': 'HELD', ':at': run.atMs },
        }),
        { abortSignal: signal },
      );
      return 'EXPIRED';
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
    const out = await this.#client.send(
      new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
      {
        abortSignal: signal,
      },
    );
    return out.Item?.status as HoldStatus;
  }

  /**
   * Confirms a hold (the booking was confirmed before the hold expired): conditional `HELD` →
   * `CONFIRMED`. @returns false when the hold was no longer held (its expiry job released it).
   */
  async confirmHold(userId: string, holdId: string, atMs: number): Promise<boolean> {
    try {
      await this.#client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: userPk(userId), sk: `${HOLD_PREFIX}${holdId}` },
          UpdateExpression: 'SET #status = :confirmed, confirmedAtMs = :at',
          ConditionExpression: '#status = :held',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':confirmed': 'CONFIRMED', ':held': 'HELD', ':at': atMs },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** Every hold of every user (a scan: fine for a local run). */
  async listHolds(): Promise<Hold[]> {
    const items = await this.#scanAll('begins_with(sk, :prefix)', { ':prefix': HOLD_PREFIX });
    return items.map((item) => {
      const { pk: _pk, sk: _sk, runIds: _runIds, ...rest } = item;
      return { ...rest, runs: (rest.runs as JobRunEntry[] | undefined) ?? [] } as unknown as Hold;
    });
  }

  /**
   * Records a run of a job in its type's run log (item `RUN-LOG#<jobType>` / `<jobId>`), once per
   * `run.runId`.
   */
  async recordJobRun(jobType: string, run: JobRunEntry, signal?: AbortSignal): Promise<void> {
    await this.#appendOnce(
      { pk: `${RUN_LOG_PREFIX}${jobType}`, sk: run.jobId },
      RUN_LOG_NAMES,
      run,
      run.runId,
      {
        itemMustExist: false,
        signal,
      },
    );
  }

  /** The runs of `jobType` recorded by {@link recordJobRun}, in the order they were recorded per job. */
  async listJobRuns(jobType: string): Promise<JobRunEntry[]> {
    const items = await this.#scanAll('pk = :pk', { ':pk': `${RUN_LOG_PREFIX}${jobType}` });
    return items.flatMap((item) => (item.runs as JobRunEntry[] | undefined) ?? []);
  }

  /** A consistent filtered scan of the whole table, every page. */
  async #scanAll(
    filter: string,
    values: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#client.send(
        new ScanCommand({
          TableName: this.tableName,
          FilterExpression: filter,
          ExpressionAttributeValues: values,
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
        { abortSignal: signal },
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }
}

function toStock(item: Record<string, unknown>): Stock {
  const reservations = item.reservations;
  return {
    sku: String(item.sku ?? String(item.pk).slice('SKU#'.length)),
    stock: Number(item.stock),
    reservations: reservations instanceof Set ? [...(reservations as Set<string>)] : [],
  };
}

function toBooking(item: Record<string, unknown>): Booking {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as Booking;
}
