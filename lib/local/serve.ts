/**
 * A stack running locally with no workload, until stopped: what `sqs-jobs local` runs for a
 * user's own app, and what `npm start -- --keep-running` / `--no-workload` serve for the sample
 * app. It prints where everything is: the endpoints, every queue with its DLQ, the tables, the
 * workers, ready-to-paste `sqs-jobs` commands, and what runs beside the stack (the web console,
 * the sample's fake external API).
 *
 * - {@link serveLocal}: starts the local runtime on the app's synthesized template, serves it
 *   ({@link serveRunning}), stops it;
 * - {@link serveRunning}: a runtime already running (the one `npm start` ran its workload on):
 *   starts what goes beside it ({@link BesideRuntime}, e.g. the console of lib/console/local.ts),
 *   prints the description ({@link renderLocalRuntime} or one JSON line), waits for the signal,
 *   closes what it started; the runtime is the caller's to stop.
 */
import { shellWord } from '../core/shell-word.ts';
import { type LocalRuntime, type LocalRuntimeOptions, startLocalRuntime } from './runtime.ts';

/** One queue of the running stack, as printed. */
export interface ServedQueue {
  /** Logical id in the template. */
  readonly logicalId: string;
  readonly name: string;
  readonly url: string;
  readonly fifo: boolean;
  /** `JOBS_QUEUE_NAME` of the worker consuming it, when one does. */
  readonly jobQueueName: string | undefined;
  /** URL of its dead-letter queue, when the template gives one. */
  readonly deadLetterQueueUrl: string | undefined;
}

/** Where everything of a running local stack is (the `--json` shape of `sqs-jobs local`). */
export interface LocalRuntimeDescription {
  readonly stackName: string;
  readonly region: string;
  /** `scheduler`: the local EventBridge Scheduler (absent in descriptions from before it existed). */
  readonly endpoints: { readonly sqs: string; readonly dynamodb: string; readonly scheduler?: string };
  /** Main queues (queues that are no other queue's DLQ), with their DLQ. */
  readonly queues: readonly ServedQueue[];
  readonly tables: readonly { readonly logicalId: string; readonly name: string }[];
  readonly workers: readonly {
    readonly functionLogicalId: string;
    readonly queueUrl: string;
    readonly enabled: boolean;
  }[];
  /** Differences from AWS met while starting. */
  readonly warnings: readonly string[];
  /** Whether cdk.out was synthesized for this run or reused, and why; absent with `--synth never`. */
  readonly synth?: { readonly synthesized: boolean; readonly reason: string };
}

/** Describes a running local stack: endpoints, queues with their DLQs, tables and workers. */
export function describeLocalRuntime(rt: LocalRuntime): LocalRuntimeDescription {
  return {
    stackName: rt.stackName,
    region: rt.region,
    endpoints: { sqs: rt.endpoints.sqs, dynamodb: rt.endpoints.dynamodb, scheduler: rt.endpoints.scheduler },
    queues: rt.queues
      .filter((q) => !q.isDeadLetterQueue)
      .map((q) => ({
        logicalId: q.logicalId,
        name: q.name,
        url: q.url,
        fifo: q.fifo,
        jobQueueName: rt.workers.find((w) => w.queueUrl === q.url)?.jobQueueName,
        deadLetterQueueUrl: q.deadLetterQueue?.url,
      })),
    tables: rt.tables.map((t) => ({ logicalId: t.logicalId, name: t.name })),
    workers: rt.workers.map((w) => ({
      functionLogicalId: w.functionLogicalId,
      queueUrl: w.queueUrl,
      enabled: w.enabled,
    })),
    warnings: rt.warnings,
    ...(rt.synth ? { synth: { synthesized: rt.synth.synthesized, reason: rt.synth.reason } } : {}),
  };
}

/** A `send` command that runs a job of the stack (instead of the placeholder). */
export interface SendExample {
  readonly queueUrl: string;
  readonly type: string;
  /** The job's data, JSON text. */
  readonly data: string;
  /** FIFO queues: the partition key (the `MessageGroupId`). */
  readonly partitionKey?: string;
  /** What the job does, printed above the command. */
  readonly comment?: string;
}

/** Options of {@link renderLocalRuntime}. */
export interface RenderLocalRuntimeOptions {
  /** How the printed commands run the CLI. @default 'npx sqs-jobs' */
  readonly cli?: string;
  /**
   * `send` commands that run real jobs of the stack; by default one on the first queue with a
   * `<job type>` placeholder.
   */
  readonly send?: readonly SendExample[];
  /** Lines printed after the commands, before the last one (what runs beside the stack). */
  readonly extra?: readonly string[];
  /** The last line. @default 'Ctrl-C stops it.' */
  readonly stopLine?: string;
}

/**
 * The description as text: endpoints, queues (FIFO marked) with DLQ, tables, then what to paste
 * in another terminal: one `export` of the endpoint, region and dummy credentials variables (the
 * AWS SDKs and the CLI read them), and `sqs-jobs stats`, `dlq list` (one per DLQ) and `send`
 * commands; then `extra` lines and how to stop.
 */
export function renderLocalRuntime(
  d: LocalRuntimeDescription,
  options: RenderLocalRuntimeOptions = {},
): string {
  const cli = options.cli ?? 'npx sqs-jobs';
  const lines = [`stack ${d.stackName} running locally (region ${d.region})`];
  if (d.synth) {
    lines.push(
      d.synth.synthesized
        ? `cdk.out synthesized for this run (${d.synth.reason})`
        : `cdk.out reused: ${d.synth.reason} (--synth always to rebuild anyway)`,
    );
  }
  lines.push('');
  lines.push(`SQS endpoint       ${d.endpoints.sqs}`, `DynamoDB endpoint  ${d.endpoints.dynamodb}`);
  if (d.endpoints.scheduler !== undefined) lines.push(`Scheduler endpoint ${d.endpoints.scheduler}`);
  lines.push('');
  for (const q of d.queues) {
    const label = q.jobQueueName ?? q.logicalId;
    lines.push(`queue ${label}${q.fifo ? ' (FIFO)' : ''}`, `  url  ${q.url}`);
    lines.push(`  dlq  ${q.deadLetterQueueUrl ?? '(none: no redrive policy)'}`);
  }
  if (d.tables.length > 0) lines.push('');
  for (const t of d.tables) lines.push(`table ${t.logicalId}  ${t.name}`);
  for (const w of d.warnings) lines.push(`note: ${w}`);
  const first = d.queues[0];
  if (first !== undefined) {
    // One export line serves the CLI, JobClient, boto3 and the AWS CLI alike: they all read the
    // service endpoints and credentials from these variables (the emulators take any keys).
    lines.push('', 'In another terminal (the emulators accept any credentials):');
    lines.push(
      `  export AWS_ENDPOINT_URL_SQS=${shellWord(d.endpoints.sqs)} AWS_ENDPOINT_URL_DYNAMODB=${shellWord(d.endpoints.dynamodb)}${d.endpoints.scheduler === undefined ? '' : ` AWS_ENDPOINT_URL_SCHEDULER=${shellWord(d.endpoints.scheduler)}`} AWS_REGION=${shellWord(d.region)} AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local`,
    );
    const urls = d.queues.map((q) => `--queue-url ${shellWord(q.url)}`).join(' ');
    lines.push(`  ${cli} stats ${urls} --watch`);
    for (const q of d.queues) {
      if (q.deadLetterQueueUrl !== undefined) {
        lines.push(`  ${cli} dlq list --dlq-url ${shellWord(q.deadLetterQueueUrl)}`);
      }
    }
    const sends: readonly SendExample[] = options.send ?? [
      {
        queueUrl: first.url,
        type: '<job type>',
        data: '{"id":"1"}',
        ...(first.fifo ? { partitionKey: 'user-1' } : {}),
      },
    ];
    for (const send of sends) {
      if (send.comment !== undefined) lines.push(`  # ${send.comment}`);
      const partition =
        send.partitionKey === undefined ? '' : ` --partition-key ${shellWord(send.partitionKey)}`;
      lines.push(
        `  ${cli} send --queue-url ${shellWord(send.queueUrl)} --type ${shellWord(send.type)} --data ${shellWord(send.data)}${partition}`,
      );
    }
    lines.push('Producers (JobClient, boto3, the AWS CLI) reach the queues with the same variables.');
  }
  if (options.extra !== undefined && options.extra.length > 0) lines.push('', ...options.extra);
  lines.push('', options.stopLine ?? 'Ctrl-C stops it.');
  return `${lines.join('\n')}\n`;
}

/**
 * Something served beside a running local stack (the web console): what it adds to the printed
 * description, and how it stops.
 */
export interface BesideRuntime {
  /** Properties added to the `--json` description (e.g. `console: { url }`). */
  readonly json: Readonly<Record<string, unknown>>;
  /** Lines added to the text description. */
  readonly text: readonly string[];
  /** Stops it; called before the runtime stops. */
  close?(): Promise<void>;
}

/** Starts something beside a running runtime (see {@link BesideRuntime}). */
export type StartBeside = (rt: LocalRuntime) => Promise<BesideRuntime>;

/** Options of {@link serveRunning}. */
export interface ServeRunningOptions {
  /** Print the description as one JSON line instead of text. @default false */
  readonly json?: boolean;
  /** Where the description goes. */
  readonly stdout: { write(text: string): unknown };
  /** Ends the serving when aborted (Ctrl-C). */
  readonly signal: AbortSignal;
  /** What goes beside the stack, started in order once it is up and closed in reverse order. */
  readonly beside?: readonly StartBeside[];
  /** How the text is rendered (the extra lines come from `beside`). */
  readonly render?: Omit<RenderLocalRuntimeOptions, 'extra'>;
}

/**
 * Serves a running local stack until `signal` aborts: starts what goes beside it, prints where
 * everything is (text, or with `json` one line: the {@link LocalRuntimeDescription} plus what each
 * {@link BesideRuntime} adds), waits, then closes what it started. The runtime keeps running: the
 * caller stops it.
 * @throws what a {@link StartBeside} throws (what was started before it is closed first).
 */
export async function serveRunning(
  rt: LocalRuntime,
  options: ServeRunningOptions,
): Promise<LocalRuntimeDescription> {
  const started: BesideRuntime[] = [];
  try {
    for (const start of options.beside ?? []) started.push(await start(rt));
    const description = describeLocalRuntime(rt);
    options.stdout.write(
      options.json
        ? `${JSON.stringify(Object.assign({}, description, ...started.map((b) => b.json)))}\n`
        : renderLocalRuntime(description, { ...options.render, extra: started.flatMap((b) => b.text) }),
    );
    if (!options.signal.aborted) {
      await new Promise<void>((resolve) =>
        options.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
    return description;
  } finally {
    for (const beside of started.reverse()) await beside.close?.();
  }
}

/** Options of {@link serveLocal}: the local runtime's, and how to serve it ({@link serveRunning}). */
export interface ServeLocalOptions extends LocalRuntimeOptions, Omit<ServeRunningOptions, 'json'> {
  /** Print the description as one JSON object (one line) instead of text. @default false */
  readonly json?: boolean;
}

/**
 * Starts the stack locally (see {@link startLocalRuntime}), prints where everything is, and keeps
 * it running until `signal` aborts ({@link serveRunning}); then stops it (in-flight invocations
 * get their grace period).
 * @throws whatever {@link startLocalRuntime} throws (nothing is left running then), or a
 *   {@link StartBeside} throws (the stack is stopped first).
 */
export async function serveLocal(options: ServeLocalOptions): Promise<LocalRuntimeDescription> {
  const rt = await startLocalRuntime(options);
  try {
    return await serveRunning(rt, options);
  } finally {
    await rt.stop();
  }
}
