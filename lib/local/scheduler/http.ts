/**
 * The local Scheduler emulator's HTTP face: the EventBridge Scheduler API's REST-JSON routes as
 * `@aws-sdk/client-scheduler` calls them (the API reference's request syntax):
 *
 * | action | route |
 * |---|---|
 * | CreateSchedule | `POST /schedules/{Name}` |
 * | GetSchedule | `GET /schedules/{Name}?groupName=` |
 * | UpdateSchedule | `PUT /schedules/{Name}` |
 * | DeleteSchedule | `DELETE /schedules/{Name}?groupName=&clientToken=` |
 * | ListSchedules | `GET /schedules?ScheduleGroup=&NamePrefix=&State=&MaxResults=&NextToken=` |
 * | CreateScheduleGroup | `POST /schedule-groups/{Name}` |
 * | GetScheduleGroup | `GET /schedule-groups/{Name}` |
 * | DeleteScheduleGroup | `DELETE /schedule-groups/{Name}` |
 * | ListScheduleGroups | `GET /schedule-groups?NamePrefix=&MaxResults=&NextToken=` |
 *
 * Timestamps travel as epoch seconds (REST-JSON's default). Errors carry `x-amzn-errortype` and
 * `{"Message": ...}` (api-errors.ts). Beyond AWS's API, one local route fires a schedule now, as
 * an operator would: `POST /_local/schedules/{Name}/fire?groupName=&duplicate=true` answers its
 * {@link FiringRecord} as JSON once it is settled, or waiting for a retry (then `pending`). Tags (`/tags/...`) are not served: `UnknownOperationException`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SchedulerApiError } from './api-errors.ts';
import type { SchedulerEngine } from './engine.ts';
import type { Schedule, ScheduleGroup, ScheduleInput, ScheduleStore } from './store.ts';

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const millis = (value: unknown) => (typeof value === 'number' ? value * 1000 : undefined);

/** A schedule as GetSchedule answers it. */
function scheduleOutput(s: Schedule): Record<string, unknown> {
  return {
    Arn: s.Arn,
    Name: s.Name,
    GroupName: s.GroupName,
    ScheduleExpression: s.ScheduleExpression,
    ScheduleExpressionTimezone: s.ScheduleExpressionTimezone,
    StartDate: seconds(s.StartDate),
    EndDate: seconds(s.EndDate),
    Description: s.Description,
    State: s.State,
    KmsKeyArn: s.KmsKeyArn,
    Target: s.Target,
    FlexibleTimeWindow: s.FlexibleTimeWindow,
    ActionAfterCompletion: s.ActionAfterCompletion,
    CreationDate: seconds(s.CreationDate),
    LastModificationDate: seconds(s.LastModificationDate),
  };
}

function groupOutput(g: ScheduleGroup): Record<string, unknown> {
  return {
    Arn: g.Arn,
    Name: g.Name,
    State: g.State,
    CreationDate: seconds(g.CreationDate),
    LastModificationDate: seconds(g.LastModificationDate),
  };
}

function scheduleInput(name: string, body: Record<string, unknown>): ScheduleInput {
  return {
    ...(body as unknown as ScheduleInput),
    Name: name,
    StartDate: millis(body.StartDate),
    EndDate: millis(body.EndDate),
  };
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new SchedulerApiError('ValidationException', 'The request body is not a JSON object.');
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': crypto.randomUUID(),
    ...headers,
  });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, errorName: string, message: string): void {
  send(response, status, { Message: message }, { 'x-amzn-errortype': errorName });
}

/** Routes one request to the store or the engine; the JSON answer and its status. */
async function route(
  request: IncomingMessage,
  store: ScheduleStore,
  engine: SchedulerEngine,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(request.url ?? '/', 'http://local');
  const q = (key: string) => url.searchParams.get(key) ?? undefined;
  const maxResults = q('MaxResults') === undefined ? undefined : Number(q('MaxResults'));
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const method = request.method ?? 'GET';
  const ok = (body: unknown) => ({ status: 200, body });
  const [first, name, action] = parts;
  if (first === 'schedules' && parts.length === 1 && method === 'GET') {
    const page = store.list({
      GroupName: q('ScheduleGroup'),
      NamePrefix: q('NamePrefix'),
      State: q('State'),
      MaxResults: maxResults,
      NextToken: q('NextToken'),
    });
    return ok({
      Schedules: page.Schedules.map((s) => ({
        Arn: s.Arn,
        Name: s.Name,
        GroupName: s.GroupName,
        State: s.State,
        CreationDate: seconds(s.CreationDate),
        LastModificationDate: seconds(s.LastModificationDate),
        Target: { Arn: s.Target.Arn },
      })),
      NextToken: page.NextToken,
    });
  }
  if (first === 'schedules' && name !== undefined && parts.length === 2) {
    const groupName = q('groupName');
    if (method === 'POST') {
      const created = store.create(scheduleInput(name, await readJson(request)));
      return ok({ ScheduleArn: created.Arn });
    }
    if (method === 'PUT')
      return ok({ ScheduleArn: store.update(scheduleInput(name, await readJson(request))).Arn });
    if (method === 'GET') return ok(scheduleOutput(store.get(name, groupName)));
    if (method === 'DELETE') {
      store.delete(name, groupName);
      return ok({});
    }
  }
  if (first === 'schedule-groups' && parts.length === 1 && method === 'GET') {
    const page = store.listGroups({
      NamePrefix: q('NamePrefix'),
      MaxResults: maxResults,
      NextToken: q('NextToken'),
    });
    return ok({ ScheduleGroups: page.ScheduleGroups.map(groupOutput), NextToken: page.NextToken });
  }
  if (first === 'schedule-groups' && name !== undefined && parts.length === 2) {
    if (method === 'POST') return ok({ ScheduleGroupArn: store.createGroup(name).Arn });
    if (method === 'GET') return ok(groupOutput(store.getGroup(name)));
    if (method === 'DELETE') {
      store.deleteGroup(name);
      return ok({});
    }
  }
  if (
    first === '_local' &&
    name === 'schedules' &&
    parts.length === 4 &&
    parts[3] === 'fire' &&
    method === 'POST'
  ) {
    const { record, settled } = engine.startFireNow(action as string, {
      groupName: q('groupName'),
      duplicate: q('duplicate') === 'true',
    });
    await Promise.race([settled, engine.idle()]);
    return ok(record);
  }
  return {
    status: 404,
    body: {
      unknown: `${method} ${url.pathname} is not an EventBridge Scheduler action the local emulator serves`,
    },
  };
}

/** A listening Scheduler API server. */
export interface SchedulerHttpServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves the Scheduler API on 127.0.0.1 (a free port unless `port` is given).
 * @throws the listen error.
 */
export async function startSchedulerHttpServer(
  store: ScheduleStore,
  engine: SchedulerEngine,
  port = 0,
): Promise<SchedulerHttpServer> {
  const server: Server = createServer((request, response) => {
    route(request, store, engine).then(
      ({ status, body }) => {
        if (status === 404)
          sendError(response, 404, 'UnknownOperationException', (body as { unknown: string }).unknown);
        else send(response, status, body);
      },
      (error: unknown) => {
        if (error instanceof SchedulerApiError)
          sendError(response, error.status, error.errorName, error.message);
        else sendError(response, 500, 'InternalServerException', (error as Error).message);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
