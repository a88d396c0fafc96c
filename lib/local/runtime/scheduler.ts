/**
 * The local runtime's EventBridge Scheduler: the emulator (lib/local/scheduler/) started after
 * the queues exist, delivering to them by ARN (a queue of the stack by its provisioned URL, any
 * other by GetQueueUrl of the name in its ARN), with the template's schedule groups and schedules
 * created in it. A template schedule the emulator refuses (a target other than an SQS queue, say)
 * is left out with a warning rather than failing the start.
 */
import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { isAddressInUse, portInUseError } from '../emulators.ts';
import { normaliseQueueUrl } from '../provision/queues.ts';
import type { ProvisionedStack } from '../provision/stack.ts';
import { type SchedulerClock, type SchedulerEmulator, startSchedulerEmulator } from '../scheduler/index.ts';

/** Options of the runtime's Scheduler (`LocalRuntimeOptions.scheduler`). */
export interface LocalSchedulerOptions {
  /** The clock schedules fire by. @default the system clock */
  readonly clock?: SchedulerClock;
  /** Probability in [0, 1] that a schedule's firing is delivered twice (a fault kind). @default 0 */
  readonly duplicateDeliveryRate?: number;
}

/** What {@link startRuntimeScheduler} needs. */
export interface RuntimeSchedulerInput {
  readonly provisioned: ProvisionedStack;
  /** Client exempt from the runtime's faults: Scheduler's side of SQS. */
  readonly sqs: SQSClient;
  /** SQS endpoint, whose origin queue URLs get. */
  readonly sqsEndpoint: string;
  readonly options: LocalSchedulerOptions | undefined;
  /** Fixed port of the Scheduler API (`--scheduler-port`). @default 0 (any free port) */
  readonly port?: number;
  readonly seed: number;
  readonly onNote: (note: string) => void;
  /** Appended to: template schedules left out. */
  readonly warnings: string[];
}

/**
 * Starts the emulator and creates the template's groups and schedules in it.
 * @throws {LocalRuntimeError} naming the port and `--scheduler-port` when a fixed port is in use;
 *   another listen error as it is (nothing else: a refused schedule is a warning).
 */
export async function startRuntimeScheduler(input: RuntimeSchedulerInput): Promise<SchedulerEmulator> {
  const { provisioned, sqs, sqsEndpoint } = input;
  const urls = new Map(provisioned.queues.map((q) => [q.arn, q.url]));
  let scheduler: SchedulerEmulator;
  try {
    scheduler = await startSchedulerEmulator({
      sqs,
      port: input.port,
      region: provisioned.region,
      accountId: provisioned.accountId,
      clock: input.options?.clock,
      duplicateDeliveryRate: input.options?.duplicateDeliveryRate,
      seed: input.seed,
      onNote: input.onNote,
      queueUrlOf: async (arn) => {
        const known = urls.get(arn);
        if (known !== undefined) return known;
        const found = await sqs.send(new GetQueueUrlCommand({ QueueName: arn.split(':')[5] }));
        return normaliseQueueUrl(found.QueueUrl as string, sqsEndpoint);
      },
    });
  } catch (cause) {
    throw isAddressInUse(cause)
      ? portInUseError('Scheduler', input.port ?? 0, '--scheduler-port', cause)
      : cause;
  }
  for (const group of provisioned.scheduleGroups) {
    try {
      scheduler.createScheduleGroup(group.name);
    } catch (error) {
      input.warnings.push(
        `schedule group ${group.logicalId} is not created locally: ${(error as Error).message}`,
      );
    }
  }
  for (const schedule of provisioned.schedules) {
    try {
      scheduler.createSchedule(schedule.input);
    } catch (error) {
      input.warnings.push(
        `schedule ${schedule.logicalId} is not created locally: ${(error as Error).message}`,
      );
    }
  }
  return scheduler;
}
