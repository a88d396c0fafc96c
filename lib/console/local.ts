/**
 * Console setups for the local runtime:
 * - {@link localRuntimeSetup}: the runtime runs in this process (`sqs-jobs local --console`, tests):
 *   the age of the oldest message comes from the emulator, and completions are counted from the
 *   workers themselves (their `JobCompleted` EMF metric when the function logs are read, else the
 *   records the emulated event source mapping deleted);
 * - {@link consoleBeside}: the console served beside a runtime of this process, as `sqs-jobs local
 *   --console` and `npm start -- --console` do (one function for both): started once the stack is
 *   up, its URL printed with the stack's description, closed before the stack stops;
 * - {@link localDescriptionSetup}: a runtime started elsewhere, known by what `sqs-jobs local --json`
 *   printed (endpoints, queues with their DLQs, tables): queues, dead letters and jobs work the
 *   same; the age of the oldest message and completions are not available from outside and say so.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { LocalRuntime } from '../local/runtime.ts';
import {
  type BesideRuntime,
  describeLocalRuntime,
  type LocalRuntimeDescription,
  type StartBeside,
} from '../local/serve.ts';
import type { OldestMessageAge, OldestMessageAgeSource } from '../ops/oldest-age.ts';
import { ConsoleBackend } from './backend.ts';
import { startConsoleServer } from './server.ts';
import type { CompletionCounter, ConsoleQueue, ConsoleSetup } from './setup.ts';

/** Credentials for emulators, which accept any. */
const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/**
 * Sums the workers' `JobCompleted` metric per `Queue` dimension from their EMF log lines
 * (docs/contracts.md, "Metrics": dimension sets `[Queue]` and `[Queue, JobType]` share one value
 * per line, counted once).
 */
export class EmfCompletions {
  readonly #byQueue = new Map<string, number>();

  /** Reads one line of a function's stdout; other lines are ignored. */
  add(line: string): void {
    if (!line.startsWith('{') || !line.includes('"JobCompleted"')) return;
    let blob: Record<string, unknown>;
    try {
      blob = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const value = blob.JobCompleted;
    const queue = blob.Queue;
    if (typeof queue !== 'string' || blob._aws === undefined) return;
    const values = Array.isArray(value) ? value : [value];
    let sum = 0;
    for (const v of values) if (typeof v === 'number') sum += v;
    this.#byQueue.set(queue, (this.#byQueue.get(queue) ?? 0) + sum);
  }

  /** Completions so far by `Queue` dimension (the worker's `JOBS_QUEUE_NAME`). */
  byQueueName(): ReadonlyMap<string, number> {
    return this.#byQueue;
  }
}

/** The console's queues of a running local stack: main queues, by `JOBS_QUEUE_NAME` when a worker has one. */
export function consoleQueuesOf(description: LocalRuntimeDescription): ConsoleQueue[] {
  return description.queues.map((q) => ({
    id: q.jobQueueName ?? q.logicalId,
    url: q.url,
    ...(q.deadLetterQueueUrl === undefined ? {} : { dlqUrl: q.deadLetterQueueUrl }),
    ...(q.jobQueueName === undefined ? {} : { jobQueueName: q.jobQueueName }),
  }));
}

/** Ages of the oldest messages as the emulator knows them (`LocalRuntime.queueDepth`). */
function runtimeOldestAges(rt: LocalRuntime): OldestMessageAgeSource {
  return {
    async read(queueNames) {
      const ages = new Map<string, OldestMessageAge>();
      for (const name of queueNames) {
        const queue = rt.queues.find((q) => q.name === name);
        let age: OldestMessageAge = {
          seconds: null,
          source: null,
          at: null,
          note: 'this endpoint cannot tell the age of its oldest message (on AWS it is a CloudWatch metric)',
        };
        if (queue !== undefined) {
          try {
            const depth = await rt.queueDepth(queue.url);
            if (depth.oldestMessageAgeMs !== undefined) {
              age = {
                seconds: Math.floor(depth.oldestMessageAgeMs / 1000),
                source: null,
                at: new Date().toISOString(),
              };
            }
          } catch {
            // keep "unknown"
          }
        }
        ages.set(name, age);
      }
      return ages;
    },
  };
}

/**
 * Completions of a runtime in this process: from the workers' `JobCompleted` metric when `emf`
 * reads their logs, else the records each event source mapping deleted after its worker returned.
 */
function runtimeCompletions(rt: LocalRuntime, emf: EmfCompletions | undefined): CompletionCounter {
  if (emf !== undefined) {
    return {
      kind: 'counter',
      label: "completed jobs (the workers' JobCompleted metric, read from their logs)",
      read() {
        const counts = new Map<string, number>();
        const byName = emf.byQueueName();
        for (const worker of rt.workers) {
          if (worker.jobQueueName === undefined) continue;
          counts.set(worker.queueUrl, byName.get(worker.jobQueueName) ?? 0);
        }
        return counts;
      },
    };
  }
  return {
    kind: 'counter',
    label:
      'messages the workers acknowledged (deleted from the queue after the worker returned: completed, ' +
      'duplicates absorbed, or dead-lettered with evidence)',
    read() {
      const stats = rt.stats().functions;
      const counts = new Map<string, number>();
      for (const worker of rt.workers) {
        const deleted = stats[worker.functionLogicalId]?.recordsDeleted ?? 0;
        counts.set(worker.queueUrl, (counts.get(worker.queueUrl) ?? 0) + deleted);
      }
      return counts;
    },
  };
}

/** Idempotency tables of a runtime's workers (`JOBS_IDEMPOTENCY_TABLE`). */
function idempotencyTablesOf(rt: LocalRuntime): string[] {
  return [
    ...new Set(
      rt.workers.flatMap((w) => (w.env.JOBS_IDEMPOTENCY_TABLE ? [w.env.JOBS_IDEMPOTENCY_TABLE] : [])),
    ),
  ];
}

/** The console over a local runtime running in this process. */
export function localRuntimeSetup(
  rt: LocalRuntime,
  options: { readonly emf?: EmfCompletions; readonly sampleSeconds?: number } = {},
): ConsoleSetup {
  const description = describeLocalRuntime(rt);
  const scheduler = localScheduler(rt.endpoints.scheduler, rt.region);
  return {
    mode: 'local',
    title: `${rt.stackName} (local)`,
    region: rt.region,
    sqs: rt.sqs,
    dynamodb: rt.dynamodb,
    ...(scheduler === undefined ? {} : { scheduler }),
    queues: consoleQueuesOf(description),
    idempotencyTables: idempotencyTablesOf(rt),
    oldestAge: runtimeOldestAges(rt),
    completions: runtimeCompletions(rt, options.emf),
    ...(options.sampleSeconds === undefined ? {} : { sampleSeconds: options.sampleSeconds }),
    notes: [
      ...rt.warnings,
      'local runtime: CloudWatch alarms, SNS topics and IAM roles have no local meaning and are not created',
    ],
    close() {
      scheduler?.destroy();
    },
  };
}

/** A client of the local Scheduler emulator, when the runtime has one. */
function localScheduler(endpoint: string | undefined, region: string): SchedulerClient | undefined {
  return endpoint === undefined
    ? undefined
    : new SchedulerClient({ endpoint, region, credentials: EMULATOR_CREDENTIALS });
}

/** Options of {@link consoleBeside}. */
export interface ConsoleBesideOptions {
  /** Address to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** Port; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** No redrive. @default false */
  readonly readOnly?: boolean;
  /**
   * The workers' completions, read from their logs: the caller feeds it the functions' stdout
   * lines (`LocalRuntimeOptions.functionLogs`). Without it, the records the workers acknowledged.
   */
  readonly emf?: EmfCompletions;
  /** Seconds between the console's samples of the queues. */
  readonly sampleSeconds?: number;
}

/**
 * The web console beside a local runtime of this process (for `serveRunning` / `serveLocal` in
 * lib/local/serve.ts): it sees what only this process knows, the emulator's age of the oldest
 * message and the workers' completions. Adds `console: { url, readOnly }` to the JSON description
 * and the URL (with this start's token) to the text.
 */
export function consoleBeside(options: ConsoleBesideOptions = {}): StartBeside {
  return async (rt): Promise<BesideRuntime> => {
    const readOnly = options.readOnly ?? false;
    const setup = localRuntimeSetup(rt, {
      ...(options.emf === undefined ? {} : { emf: options.emf }),
      ...(options.sampleSeconds === undefined ? {} : { sampleSeconds: options.sampleSeconds }),
    });
    const server = await startConsoleServer({
      backend: new ConsoleBackend(setup, { readOnly }),
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
    });
    return {
      json: { console: { url: server.url, readOnly } },
      text: [
        `Console${readOnly ? ' (read-only)' : ''}: ${server.url}`,
        '  (the token in the URL is the key to it until Ctrl-C: do not share it)',
      ],
      close: async () => {
        await server.close();
        await setup.close?.();
      },
    };
  };
}

/**
 * The console over a local runtime known by its description (`sqs-jobs local --json`).
 * @param idempotencyTables @default the tables whose logical id names idempotency
 */
export function localDescriptionSetup(
  description: LocalRuntimeDescription,
  options: { readonly idempotencyTables?: readonly string[] } = {},
): ConsoleSetup {
  const sqs = new SQSClient({
    endpoint: description.endpoints.sqs,
    region: description.region,
    credentials: EMULATOR_CREDENTIALS,
  });
  const dynamodb = new DynamoDBClient({
    endpoint: description.endpoints.dynamodb,
    region: description.region,
    credentials: EMULATOR_CREDENTIALS,
  });
  const scheduler = localScheduler(description.endpoints.scheduler, description.region);
  const tables =
    options.idempotencyTables && options.idempotencyTables.length > 0
      ? [...options.idempotencyTables]
      : description.tables.filter((t) => /idempotency/i.test(t.logicalId)).map((t) => t.name);
  return {
    mode: 'local',
    title: `${description.stackName} (local)`,
    region: description.region,
    sqs,
    dynamodb,
    ...(scheduler === undefined ? {} : { scheduler }),
    queues: consoleQueuesOf(description),
    idempotencyTables: tables,
    notes: [
      ...description.warnings,
      'the workers run in another process (sqs-jobs local): completions and the age of the oldest message are ' +
        'not visible from here; sqs-jobs local --console shows them',
    ],
    close() {
      sqs.destroy();
      dynamodb.destroy();
      scheduler?.destroy();
    },
  };
}
