/**
 * The tracer module of a deployed worker: what `JobQueue` bundles into `xray-tracer.mjs`, a file
 * of its own beside the worker's `index.mjs` (lib/constructs/job-queue/tracer-bundle.ts), so the
 * Powertools Tracer and the X-Ray SDK under it (about 125 KB minified) are neither read nor
 * parsed at a cold start; lib/runtime/tracing.ts imports that file on the first sampled
 * invocation only. Never imported by the runtime itself: an import here would put the tracer
 * back into every worker bundle.
 */
export { Tracer } from '@aws-lambda-powertools/tracer';
