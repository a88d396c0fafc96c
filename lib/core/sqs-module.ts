/**
 * The AWS SDK's SQS module, imported at its first use, once per process: what the client's sends
 * (lib/client/job-sender.ts) and the worker's (DLQ sends, visibility changes, children) share, so
 * a worker holds one loader, and a load the worker starts ahead of its deadline
 * (lib/runtime/sqs-module.ts, `preloadSqsModule`) serves its children's sends too. Why lazily:
 * with the SDK left out of a bundle (the Lambda runtime provides it) a static import would load
 * the module at every cold start, for batches that mostly send nothing (issue 10, issue 21).
 */
type SqsModule = typeof import('@aws-sdk/client-sqs');

let loading: Promise<SqsModule> | undefined;

/** `@aws-sdk/client-sqs`, imported once per process (a failed import is tried again on the next call). */
export function loadSqsModule(): Promise<SqsModule> {
  loading ??= import('@aws-sdk/client-sqs').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Whether the module is loaded or loading (a failed load is not). */
export function sqsModuleRequested(): boolean {
  return loading !== undefined;
}
