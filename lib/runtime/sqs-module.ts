/**
 * The AWS SDK's SQS module, loaded at its first use. A batch whose records all complete sends
 * nothing to SQS (the event source mapping deletes them), so a worker loads the module only when
 * a record is retried, dead-lettered or enqueues a child: the module and its command serializers
 * are kept out of every cold start and out of the heap of workers that never need them (bench
 * cold-start and heap rows, issue 10). In a bundle that includes the SDK the module is still in
 * the file; only its evaluation waits.
 */
type SqsModule = typeof import('@aws-sdk/client-sqs');

let loading: Promise<SqsModule> | undefined;

/** `@aws-sdk/client-sqs`, imported once per process. */
export function loadSqsModule(): Promise<SqsModule> {
  loading ??= import('@aws-sdk/client-sqs');
  return loading;
}
