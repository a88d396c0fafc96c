/**
 * Any CDK app's stack running locally with no workload, until stopped: what `sqs-jobs local`
 * runs for a user's own app (and what a long-running local session shows). It starts the local
 * runtime on the app's synthesized template, then prints where everything is: the endpoints,
 * every queue with its DLQ, the tables, the workers, and ready-to-paste `sqs-jobs` commands.
 */
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
  readonly endpoints: { readonly sqs: string; readonly dynamodb: string };
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
    endpoints: { sqs: rt.endpoints.sqs, dynamodb: rt.endpoints.dynamodb },
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

/** Quotes a shell argument when it needs it (URLs from emulators normally do not). */
function shellArg(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The description as text: endpoints, queues (FIFO marked) with DLQ, tables, then what to paste
 * in another terminal: one `export` of the endpoint, region and dummy credentials variables (the
 * AWS SDKs and the CLI read them), and `npx sqs-jobs stats`, `dlq list`, `send` commands.
 */
export function renderLocalRuntime(d: LocalRuntimeDescription): string {
  const lines = [`stack ${d.stackName} running locally (region ${d.region})`];
  if (d.synth) {
    lines.push(
      d.synth.synthesized
        ? `cdk.out synthesized for this run (${d.synth.reason})`
        : `cdk.out reused: ${d.synth.reason} (--synth always to rebuild anyway)`,
    );
  }
  lines.push('');
  lines.push(`SQS endpoint       ${d.endpoints.sqs}`, `DynamoDB endpoint  ${d.endpoints.dynamodb}`, '');
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
      `  export AWS_ENDPOINT_URL_SQS=${shellArg(d.endpoints.sqs)} AWS_ENDPOINT_URL_DYNAMODB=${shellArg(d.endpoints.dynamodb)} AWS_REGION=${shellArg(d.region)} AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local`,
    );
    const urls = d.queues.map((q) => `--queue-url ${shellArg(q.url)}`).join(' ');
    lines.push(`  npx sqs-jobs stats ${urls} --watch`);
    if (first.deadLetterQueueUrl !== undefined) {
      lines.push(`  npx sqs-jobs dlq list --dlq-url ${shellArg(first.deadLetterQueueUrl)}`);
    }
    const partition = first.fifo ? ' --partition-key user-1' : '';
    lines.push(
      `  npx sqs-jobs send --queue-url ${shellArg(first.url)} --type <job type> --data '{"id":"1"}'${partition}`,
    );
    lines.push('Producers (JobClient, boto3, the AWS CLI) reach the queues with the same variables.');
  }
  lines.push('', 'Ctrl-C stops it.');
  return `${lines.join('\n')}\n`;
}

/** Options of {@link serveLocal}: the local runtime's, and how to print. */
export interface ServeLocalOptions extends LocalRuntimeOptions {
  /** Print the description as one JSON object instead of text. @default false */
  readonly json?: boolean;
  /** Where the description goes. */
  readonly stdout: { write(text: string): unknown };
  /** Stops the stack when aborted (Ctrl-C). */
  readonly signal: AbortSignal;
}

/**
 * Starts the stack locally (see {@link startLocalRuntime}), prints where everything is, and keeps
 * it running until `signal` aborts; then stops it (in-flight invocations get their grace period).
 * @throws whatever {@link startLocalRuntime} throws (nothing is left running then).
 */
export async function serveLocal(options: ServeLocalOptions): Promise<LocalRuntimeDescription> {
  const rt = await startLocalRuntime(options);
  try {
    const description = describeLocalRuntime(rt);
    options.stdout.write(options.json ? `${JSON.stringify(description)}\n` : renderLocalRuntime(description));
    if (!options.signal.aborted) {
      await new Promise<void>((resolve) =>
        options.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
    return description;
  } finally {
    await rt.stop();
  }
}
