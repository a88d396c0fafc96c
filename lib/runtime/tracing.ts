/**
 * AWS X-Ray in the worker: one subsegment per job of a sampled invocation, recorded with the
 * Powertools Tracer (`@aws-lambda-powertools/tracer`, the X-Ray SDK underneath).
 *
 * - Subsegment `## <job type>` under the invocation's segment, from the record's start to its
 *   outcome. Annotations (indexed, searchable with filter expressions such as
 *   `annotation.jobType = "payments.capture" AND annotation.outcome = "dead-lettered"`):
 *   `jobType`, `jobKey` (the idempotency key), `outcome` (`completed`, `duplicate`,
 *   `dead-lettered`, `retry`), `queue`. Metadata (namespace `sqs-jobs`, not indexed): the SQS
 *   message id, the receive count, the retry reason, and the envelope's `id`, `source`, `time`,
 *   `partitionkey` and lineage attributes (`causationid`, `parentjob`, `rootid`, `correlationid`,
 *   `traceparent`, `tracestate`) when present. A retried record is flagged `error`, a dead-lettered one `fault`.
 * - Cost: nothing is imported or built at cold start. Per invocation the worker reads the trace
 *   header (`_X_AMZN_TRACE_ID`, or Lambda's invoke store); only when it says `Sampled=1` is the
 *   tracer loaded (once, on the first sampled invocation) and a subsegment written per record.
 *   An unsampled invocation (X-Ray samples the first request each second and 5 % of the rest),
 *   a function without active tracing, a run outside Lambda, or `POWERTOOLS_TRACE_ENABLED=false`
 *   costs one environment read per batch. Bytes: no worker bundle holds the tracer, whoever
 *   bundles it (the package is imported through a name a bundler cannot follow); a `JobQueue`
 *   worker carries it in a file of its own (`xray-tracer.mjs`, beside `index.mjs`), read on the
 *   first sampled invocation only (importTracerModule says where else it is looked for).
 * - What it leaves alone: the tracer is built with `captureHTTPsRequests: false` and no AWS SDK
 *   client is captured, so outgoing requests keep the `X-Amzn-Trace-Id` header the AWS SDK's
 *   recursion-detection middleware copies from `_X_AMZN_TRACE_ID` unchanged, `Lineage`
 *   included; a child job's message carries its own chain's header (chain-trace.ts), with or
 *   without tracing (docs/architecture.md, "A job that enqueues to its own queue").
 */

/** What one job's subsegment records; plain values, built by the record pipeline. */
export interface JobTraceFacts {
  /** The envelope's type; undefined when the body could not be read as an envelope. */
  readonly jobType: string | undefined;
  /** The job's idempotency key; undefined before it is known (unroutable body, bad data). */
  readonly key: string | undefined;
  /** The record's outcome (`completed`, `duplicate`, `dead-lettered`, `retry`). */
  readonly outcome: string;
  /** Why a `retry` is reported (`transient`, `busy`, `deadline`...). */
  readonly retryReason?: string;
  readonly queue: string;
  readonly messageId: string;
  readonly receiveCount: number;
  /** The parsed envelope, for its id, source, time, partition key and lineage attributes. */
  readonly envelope: object | undefined;
  /** When the record was started, epoch milliseconds; the subsegment ends when it is recorded. */
  readonly startedAtMs: number;
}

/** Records the jobs of one traced invocation. */
export interface JobTracer {
  recordJob(facts: JobTraceFacts): void;
}

/** Annotation names (X-Ray: letters, digits and underscores). */
export const JOB_TRACE_ANNOTATIONS = {
  jobType: 'jobType',
  jobKey: 'jobKey',
  outcome: 'outcome',
  queue: 'queue',
} as const;

/** Metadata namespace of the subsegments. */
export const JOB_TRACE_METADATA_NAMESPACE = 'sqs-jobs';

/** Envelope attributes copied into the metadata when present (lineage from docs/contracts.md). */
const ENVELOPE_METADATA = [
  'id',
  'source',
  'time',
  'partitionkey',
  'causationid',
  'parentjob',
  'rootid',
  'correlationid',
  'traceparent',
  'tracestate',
] as const;

/** X-Ray keeps annotation strings short; keys and types are cut to this many characters. */
const MAX_ANNOTATION_CHARS = 250;

type Env = Readonly<Record<string, string | undefined>>;

/** The invocation's X-Ray trace header, as the X-Ray SDK and Powertools read it. */
export function invocationTraceHeader(env: Env): string | undefined {
  const store = (
    globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId?: () => string | undefined } } }
  ).awslambda?.InvokeStore;
  return store?.getXRayTraceId?.() ?? env._X_AMZN_TRACE_ID;
}

/** Whether this invocation is sampled: its trace header says `Sampled=1`. */
export function isInvocationSampled(env: Env): boolean {
  const header = invocationTraceHeader(env);
  return header?.includes('Sampled=1') === true;
}

/** The parts of an X-Ray subsegment (aws-xray-sdk-core `Subsegment`) written here. */
interface XraySubsegment {
  start_time: number;
  addAnnotation(key: string, value: string | number | boolean): void;
  addMetadata(key: string, value: unknown, namespace?: string): void;
  addErrorFlag(): void;
  addFaultFlag(): void;
  close(): void;
}
interface XraySegment {
  addNewSubsegment(name: string): XraySubsegment;
}
/** The parts of the Powertools Tracer used here. */
interface PowertoolsTracerLike {
  isTracingEnabled(): boolean;
  getSegment(): XraySegment | undefined;
}

/** A {@link JobTracer} on a Powertools Tracer (or anything with its `getSegment`). */
export class SubsegmentJobTracer implements JobTracer {
  readonly #tracer: PowertoolsTracerLike;
  constructor(tracer: PowertoolsTracerLike) {
    this.#tracer = tracer;
  }

  recordJob(facts: JobTraceFacts): void {
    const segment = this.#tracer.getSegment();
    if (segment === undefined) return;
    const sub = segment.addNewSubsegment(`## ${cut(facts.jobType ?? 'unknown')}`);
    sub.start_time = facts.startedAtMs / 1000;
    if (facts.jobType !== undefined) sub.addAnnotation(JOB_TRACE_ANNOTATIONS.jobType, cut(facts.jobType));
    if (facts.key !== undefined) sub.addAnnotation(JOB_TRACE_ANNOTATIONS.jobKey, cut(facts.key));
    sub.addAnnotation(JOB_TRACE_ANNOTATIONS.outcome, facts.outcome);
    sub.addAnnotation(JOB_TRACE_ANNOTATIONS.queue, cut(facts.queue));
    sub.addMetadata('job', jobMetadata(facts), JOB_TRACE_METADATA_NAMESPACE);
    if (facts.outcome === 'retry') sub.addErrorFlag();
    else if (facts.outcome === 'dead-lettered') sub.addFaultFlag();
    sub.close();
  }
}

function cut(value: string): string {
  return value.length <= MAX_ANNOTATION_CHARS ? value : value.slice(0, MAX_ANNOTATION_CHARS);
}

function jobMetadata(facts: JobTraceFacts): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    messageId: facts.messageId,
    receiveCount: facts.receiveCount,
  };
  if (facts.retryReason !== undefined) metadata.retryReason = facts.retryReason;
  if (facts.key !== undefined && facts.key.length > MAX_ANNOTATION_CHARS) metadata.jobKey = facts.key;
  const envelope = facts.envelope as Readonly<Record<string, unknown>> | undefined;
  if (envelope !== undefined) {
    const attributes: Record<string, unknown> = {};
    for (const name of ENVELOPE_METADATA) {
      if (envelope[name] !== undefined) attributes[name] = envelope[name];
    }
    metadata.envelope = attributes;
  }
  return metadata;
}

/** Options of {@link JobTracing}. */
export interface JobTracingOptions {
  /** Environment to read per invocation. @default process.env */
  readonly env?: Env;
  /** Called once when the tracer cannot be loaded (tracing then stays off). */
  readonly onLoadError?: (error: unknown) => void;
  /** Builds the tracer. @default the Powertools Tracer, imported on first use ({@link XRAY_TRACER_FILE} when bundled) */
  readonly load?: () => Promise<PowertoolsTracerLike>;
}

/**
 * The tracer file a bundled worker carries beside its `index.mjs` (`JobQueue` writes it, from
 * lib/runtime/xray-tracer.ts): the tracer is not in the worker's main bundle.
 */
export const XRAY_TRACER_FILE = 'xray-tracer.mjs';

type TracerModule = typeof import('./xray-tracer.ts');

/**
 * The tracer's package, named through a variable: a bundler sees an import it cannot resolve at
 * build time and leaves it out, where a literal `import('@aws-lambda-powertools/tracer')` would
 * be inlined into a worker's single-file bundle (esbuild's defaults, NodejsFunction's): about
 * 118 KB read and parsed at every cold start of every worker, traced or not (issue 21).
 */
const TRACER_PACKAGE: string = ['@aws-lambda-powertools', 'tracer'].join('/');

/**
 * The Powertools Tracer's module, found in this order:
 * 1. {@link XRAY_TRACER_FILE} beside this module (a `JobQueue` worker, whose `index.mjs` this
 *    module then is; or a worker bundled by its owner with that file next to it, docs/deploy.md);
 * 2. the package, imported as Node resolves it from here (unbundled runs: tests, the local
 *    tools, a deployment that ships `node_modules`);
 * 3. the package through `require`, which also reads `NODE_PATH`: Lambda sets it to the layers'
 *    `/opt/nodejs/node_modules`, where the Powertools layer keeps the Tracer (an ESM `import`
 *    never reads `NODE_PATH`).
 * @throws the last error when none of them has it (tracing then stays off, logged once).
 */
async function importTracerModule(): Promise<TracerModule> {
  // A CommonJS bundle has no import.meta.url (esbuild leaves it undefined): the package, then.
  const base: unknown = import.meta.url;
  const sibling = typeof base === 'string' ? new URL(XRAY_TRACER_FILE, base) : undefined;
  if (sibling?.protocol === 'file:') {
    const { existsSync } = await import('node:fs');
    const { fileURLToPath } = await import('node:url');
    if (existsSync(fileURLToPath(sibling))) return (await import(sibling.href)) as TracerModule;
  }
  try {
    return (await import(TRACER_PACKAGE)) as TracerModule;
  } catch (error) {
    const { createRequire } = await import('node:module');
    const from = typeof base === 'string' ? base : `${process.cwd()}/`;
    try {
      return createRequire(from)(TRACER_PACKAGE) as TracerModule;
    } catch {
      throw error;
    }
  }
}

/** Powertools Tracer without HTTP capture: outgoing requests keep their trace header as the SDK wrote it. */
async function loadPowertoolsTracer(): Promise<PowertoolsTracerLike> {
  const { Tracer } = await importTracerModule();
  return new Tracer({ captureHTTPsRequests: false }) as unknown as PowertoolsTracerLike;
}

/**
 * The tracing of one worker: decides per invocation, loads the tracer on the first sampled one.
 * Built by `createWorker`; nothing is imported until a sampled invocation needs it.
 */
export class JobTracing {
  readonly #env: Env;
  readonly #disabled: boolean;
  readonly #load: () => Promise<PowertoolsTracerLike>;
  readonly #onLoadError: ((error: unknown) => void) | undefined;
  #tracer: Promise<JobTracer | undefined> | undefined;

  constructor(options: JobTracingOptions = {}) {
    this.#env = options.env ?? process.env;
    this.#disabled = this.#env.POWERTOOLS_TRACE_ENABLED?.trim().toLowerCase() === 'false';
    this.#load = options.load ?? loadPowertoolsTracer;
    this.#onLoadError = options.onLoadError;
  }

  /**
   * The tracer of this invocation, or undefined (synchronously) when it is not sampled or
   * tracing is off: the caller awaits only in a sampled invocation.
   */
  forInvocation(): Promise<JobTracer | undefined> | undefined {
    if (this.#disabled || !isInvocationSampled(this.#env)) return undefined;
    this.#tracer ??= this.#load().then(
      (tracer) => (tracer.isTracingEnabled() ? new SubsegmentJobTracer(tracer) : undefined),
      (error: unknown) => {
        this.#onLoadError?.(error);
        return undefined;
      },
    );
    return this.#tracer;
  }
}
