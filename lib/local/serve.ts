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
  };
}

/** Quotes a shell argument when it needs it (URLs from emulators normally do not). */
function shellArg(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The description as text: endpoints, queues (FIFO marked) with DLQ, tables, then commands to
 * paste in another terminal (`npx sqs-jobs stats`, `dlq list`, `send`) with `--endpoint` and
 * `--region` filled in.
 */
export function renderLocalRuntime(d: LocalRuntimeDescription): string {
  const lines = [`stack ${d.stackName} running locally (region ${d.region})`, ''];
  lines.push(`SQS endpoint       ${d.endpoints.sqs}`, `DynamoDB endpoint  ${d.endpoints.dynamodb}`, '');
  for (const q of d.queues) {
    const label = q.jobQueueName ?? q.logicalId;
    lines.push(`queue ${label}${q.fifo ? ' (FIFO)' : ''}`, `  url  ${q.url}`);
    lines.push(`  dlq  ${q.deadLetterQueueUrl ?? '(none: no redrive policy)'}`);
  }
  if (d.tables.length > 0) lines.push('');
  for (const t of d.tables) lines.push(`table ${t.logicalId}  ${t.name}`);
  for (const w of d.warnings) lines.push(`note: ${w}`);
  const common = `--endpoint ${shellArg(d.endpoints.sqs)} --region ${shellArg(d.region)}`;
  const first = d.queues[0];
  if (first !== undefined) {
    lines.push('', 'Try, in another terminal:');
    const urls = d.queues.map((q) => `--queue-url ${shellArg(q.url)}`).join(' ');
    lines.push(`  npx sqs-jobs stats ${urls} ${common} --watch`);
    if (first.deadLetterQueueUrl !== undefined) {
      lines.push(`  npx sqs-jobs dlq list --dlq-url ${shellArg(first.deadLetterQueueUrl)} ${common}`);
    }
    const partition = first.fifo ? ' --partition-key user-1' : '';
    lines.push(
      `  npx sqs-jobs send --queue-url ${shellArg(first.url)} --type <job type> --data '{"id":"1"}'${partition} ${common}`,
    );
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
