/**
 * Fakes of the two clients `JobClient` uses for jobs sent for later, for unit tests: an
 * EventBridge Scheduler that keeps schedules in memory with the API's answers (ConflictException
 * on a second name, ResourceNotFoundException for an absent one), and a DynamoDB table that keeps
 * items in memory and evaluates the condition and update expressions of the state item (a small
 * interpreter of the forms used: `=`, `<>`, `<`, `<=`, `>`, `>=`, AND, OR, parentheses,
 * `attribute_not_exists`; `SET a = v, ...` and `REMOVE a`). Both record every command.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** A recorded command: its class name and input. */
export interface RecordedCommand {
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: any command input; tests read the fields they check.
  readonly input: any;
}

function awsError(name: string, message: string): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 }, $fault: 'client' });
}

// biome-ignore lint/suspicious/noExplicitAny: a command of any SDK.
function recorded(command: any): RecordedCommand {
  return { name: command.constructor.name, input: structuredClone(command.input) };
}

/** In-memory EventBridge Scheduler. */
export class FakeScheduler {
  readonly calls: RecordedCommand[] = [];
  /** `<group>/<name>` → the CreateSchedule/UpdateSchedule input. */
  // biome-ignore lint/suspicious/noExplicitAny: the stored request.
  readonly schedules = new Map<string, any>();
  /** Throws this after the command took effect (a lost response), once per entry. */
  readonly loseResponseOf: string[] = [];
  /** Throws this before the command takes effect, once per entry. */
  readonly failBefore: string[] = [];

  // biome-ignore lint/suspicious/noExplicitAny: any Scheduler command.
  async send(command: any): Promise<unknown> {
    const call = recorded(command);
    this.calls.push(call);
    const before = this.failBefore.indexOf(call.name);
    if (before >= 0) {
      this.failBefore.splice(before, 1);
      throw awsError('InternalServerException', 'the fake failed');
    }
    const key = `${call.input.GroupName ?? 'default'}/${call.input.Name}`;
    let output: unknown;
    switch (call.name) {
      case 'CreateScheduleCommand':
        if (this.schedules.has(key))
          throw awsError('ConflictException', `Schedule ${call.input.Name} already exists.`);
        this.schedules.set(key, call.input);
        output = { ScheduleArn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/${key}` };
        break;
      case 'GetScheduleCommand': {
        const found = this.schedules.get(key);
        if (!found)
          throw awsError('ResourceNotFoundException', `Schedule ${call.input.Name} does not exist.`);
        output = { ...found, Arn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/${key}` };
        break;
      }
      case 'UpdateScheduleCommand':
        if (!this.schedules.has(key))
          throw awsError('ResourceNotFoundException', `Schedule ${call.input.Name} does not exist.`);
        this.schedules.set(key, call.input);
        output = {};
        break;
      case 'DeleteScheduleCommand':
        if (!this.schedules.delete(key))
          throw awsError('ResourceNotFoundException', `Schedule ${call.input.Name} does not exist.`);
        output = {};
        break;
      default:
        throw new Error(`the fake scheduler does not know ${call.name}`);
    }
    const lost = this.loseResponseOf.indexOf(call.name);
    if (lost >= 0) {
      this.loseResponseOf.splice(lost, 1);
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    }
    return output;
  }

  /** The calls of one command, e.g. `CreateScheduleCommand`. */
  callsOf(name: string): RecordedCommand[] {
    return this.calls.filter((call) => call.name === name);
  }
}

type Item = Record<string, AttributeValue>;

/** In-memory DynamoDB table keyed by `pk`. */
export class FakeDynamoTable {
  readonly calls: RecordedCommand[] = [];
  readonly items = new Map<string, Item>();
  /** Throws an InternalServerError before this command takes effect, once per entry. */
  readonly failBefore: string[] = [];

  // biome-ignore lint/suspicious/noExplicitAny: any DynamoDB command.
  async send(command: any): Promise<unknown> {
    const call = recorded(command);
    this.calls.push(call);
    const before = this.failBefore.indexOf(call.name);
    if (before >= 0) {
      this.failBefore.splice(before, 1);
      throw awsError('InternalServerError', 'the fake failed');
    }
    const input = call.input;
    switch (call.name) {
      case 'GetItemCommand': {
        const item = this.items.get(input.Key.pk.S);
        return item ? { Item: structuredClone(item) } : {};
      }
      case 'PutItemCommand': {
        const pk = input.Item.pk.S as string;
        this.#check(this.items.get(pk), input);
        this.items.set(pk, structuredClone(input.Item));
        return {};
      }
      case 'UpdateItemCommand': {
        const pk = input.Key.pk.S as string;
        const old = this.items.get(pk);
        this.#check(old, input);
        const item = applyUpdate(structuredClone(old ?? { pk: { S: pk } }), input);
        this.items.set(pk, item);
        return input.ReturnValues === 'ALL_NEW' ? { Attributes: structuredClone(item) } : {};
      }
      default:
        throw new Error(`the fake table does not know ${call.name}`);
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: a command input with a condition.
  #check(item: Item | undefined, input: any): void {
    if (input.ConditionExpression === undefined) return;
    const ok = evaluate(
      input.ConditionExpression,
      item,
      input.ExpressionAttributeNames ?? {},
      input.ExpressionAttributeValues ?? {},
    );
    if (!ok) throw awsError('ConditionalCheckFailedException', 'The conditional request failed');
  }

  /** The calls of one command, e.g. `PutItemCommand`. */
  callsOf(name: string): RecordedCommand[] {
    return this.calls.filter((call) => call.name === name);
  }
}

// ------------------------------------------------------------------ expressions

const TOKEN = /\s*(\(|\)|<>|<=|>=|=|<|>|,|[#:]?[A-Za-z_][\w]*|:\d+|#\d+)/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const match = TOKEN.exec(text);
    if (!match) {
      if (text.slice(TOKEN.lastIndex).trim() === '') break;
      throw new Error(`the fake table cannot read ${text} at ${TOKEN.lastIndex}`);
    }
    tokens.push(match[1] as string);
  }
  return tokens;
}

function compare(a: AttributeValue | undefined, b: AttributeValue | undefined, op: string): boolean {
  if (a === undefined || b === undefined) return false;
  const x = a.N !== undefined ? Number(a.N) : a.S;
  const y = b.N !== undefined ? Number(b.N) : b.S;
  if (x === undefined || y === undefined) return false;
  switch (op) {
    case '=':
      return x === y;
    case '<>':
      return x !== y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    default:
      throw new Error(`the fake table does not know ${op}`);
  }
}

function evaluate(
  text: string,
  item: Item | undefined,
  names: Record<string, string>,
  values: Record<string, AttributeValue>,
): boolean {
  const tokens = tokenize(text);
  let at = 0;
  const name = (token: string): string => names[token] ?? token;
  const operand = (token: string): AttributeValue | undefined =>
    token.startsWith(':') ? values[token] : item?.[name(token)];
  const term = (): boolean => {
    const token = tokens[at++] as string;
    if (token === '(') {
      const value = or();
      at++; // ')'
      return value;
    }
    if (token === 'attribute_not_exists') {
      at++; // '('
      const attribute = name(tokens[at++] as string);
      at++; // ')'
      return item?.[attribute] === undefined;
    }
    const op = tokens[at++] as string;
    return compare(operand(token), operand(tokens[at++] as string), op);
  };
  const and = (): boolean => {
    let value = term();
    while (tokens[at] === 'AND') {
      at++;
      value = term() && value;
    }
    return value;
  };
  const or = (): boolean => {
    let value = and();
    while (tokens[at] === 'OR') {
      at++;
      value = and() || value;
    }
    return value;
  };
  return or();
}

// biome-ignore lint/suspicious/noExplicitAny: an UpdateItem input.
function applyUpdate(item: Item, input: any): Item {
  const names: Record<string, string> = input.ExpressionAttributeNames ?? {};
  const values: Record<string, AttributeValue> = input.ExpressionAttributeValues ?? {};
  const name = (token: string): string => names[token] ?? token;
  const text: string = input.UpdateExpression;
  const [setPart, removePart] = text.split(/\s+REMOVE\s+/);
  for (const assignment of (setPart ?? '').replace(/^SET\s+/, '').split(/,\s*(?![^(]*\))/)) {
    const [left, right] = assignment.split('=').map((part) => part.trim()) as [string, string];
    const ifNotExists = /^if_not_exists\(([^,]+),\s*([^)]+)\)$/.exec(right);
    if (ifNotExists) {
      const current = item[name((ifNotExists[1] as string).trim())];
      item[name(left)] = current ?? (values[(ifNotExists[2] as string).trim()] as AttributeValue);
    } else {
      item[name(left)] = values[right] as AttributeValue;
    }
  }
  for (const attribute of (removePart ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    delete item[name(attribute)];
  }
  return item;
}
