/**
 * The local Scheduler emulator (lib/local/scheduler/) answers @aws-sdk/client-scheduler as moto's
 * Scheduler does (moto 5.2.1 models AWS's shapes; it never fires): the same calls to both, the
 * same answers, field for field, apart from dates and what moto leaves out.
 */
import {
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ManualClock,
  type SchedulerEmulator,
  startSchedulerEmulator,
} from '../../lib/local/scheduler/index.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';

const credentials = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const region = 'us-east-1';
let moto: MotoServer | undefined;
let local: SchedulerEmulator | undefined;
let clients: Record<'moto' | 'local', SchedulerClient>;
const sqs = new SQSClient({ region, credentials, endpoint: 'http://127.0.0.1:9' });

beforeAll(async () => {
  moto = await startMotoServer(process.env.MOTO_SERVER ?? 'moto_server');
  local = await startSchedulerEmulator({
    sqs,
    region,
    accountId: '123456789012',
    clock: new ManualClock(Date.now()),
    queueUrlOf: async () => 'http://127.0.0.1:9/none',
  });
  clients = {
    moto: new SchedulerClient({ region, credentials, endpoint: moto.endpoint }),
    local: new SchedulerClient({ region, credentials, endpoint: local.url }),
  };
});

afterAll(async () => {
  await local?.stop();
  moto?.stop();
  sqs.destroy();
});

const input: CreateScheduleCommandInput = {
  Name: 'sj-0123456789abcdef',
  ScheduleExpression: 'at(2030-01-01T00:00:00)',
  ScheduleExpressionTimezone: 'UTC',
  ActionAfterCompletion: 'DELETE',
  FlexibleTimeWindow: { Mode: 'OFF' },
  Target: {
    Arn: 'arn:aws:sqs:us-east-1:123456789012:jobs.fifo',
    RoleArn: 'arn:aws:iam::123456789012:role/scheduler',
    Input: '{"id":"x"}',
    SqsParameters: { MessageGroupId: 'user-1' },
  },
};

// biome-ignore lint/suspicious/noExplicitAny: any Scheduler command, sent to two clients alike
type AnyCommand = any;

/** The outcome of a call: its answer without metadata and dates, or its error's name and message. */
async function outcome(client: SchedulerClient, command: AnyCommand): Promise<unknown> {
  try {
    const {
      $metadata: _m,
      CreationDate: _c,
      LastModificationDate: _l,
      ...rest
    } = (await client.send(command)) as unknown as Record<string, unknown>;
    // Dates differ by when each was called; list entries carry them too.
    const undated = (v: unknown) => {
      const { CreationDate: _c, LastModificationDate: _l, ...kept } = v as Record<string, unknown>;
      return kept;
    };
    if (Array.isArray(rest.Schedules)) rest.Schedules = rest.Schedules.map(undated);
    return rest;
  } catch (error) {
    return { error: (error as Error).name, message: (error as Error).message };
  }
}

describe('the local Scheduler emulator against moto', () => {
  it('creates, gets, conflicts, lists and deletes with the same answers', async () => {
    const both = async (command: AnyCommand) => {
      const [m, l] = [await outcome(clients.moto, command), await outcome(clients.local, command)];
      expect(l).toEqual(m);
      return l;
    };
    expect(await both(new CreateScheduleCommand(input))).toEqual({
      ScheduleArn: 'arn:aws:scheduler:us-east-1:123456789012:schedule/default/sj-0123456789abcdef',
    });
    const got = (await both(new GetScheduleCommand({ Name: input.Name }))) as Record<string, unknown>;
    expect(got).toMatchObject({
      GroupName: 'default',
      State: 'ENABLED',
      Target: { RetryPolicy: { MaximumEventAgeInSeconds: 86400, MaximumRetryAttempts: 185 } },
    });
    expect(await both(new CreateScheduleCommand(input))).toEqual({
      error: 'ConflictException',
      message: `Schedule ${input.Name} already exists.`,
    });
    const listed = (await both(new ListSchedulesCommand({}))) as { Schedules: Record<string, unknown>[] };
    expect(listed.Schedules).toHaveLength(1);
    await both(new DeleteScheduleCommand({ Name: input.Name }));
    expect(await both(new GetScheduleCommand({ Name: input.Name }))).toEqual({
      error: 'ResourceNotFoundException',
      message: `Schedule ${input.Name} does not exist.`,
    });
    expect(await both(new DeleteScheduleCommand({ Name: input.Name }))).toMatchObject({
      error: 'ResourceNotFoundException',
    });
  });
});
