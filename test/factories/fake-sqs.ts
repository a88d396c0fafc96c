/**
 * The fake SQS client of the unit tests: the test kit's in-memory client (`MemorySqs`,
 * lib/testing/memory-sqs.ts) under the name the tests use.
 */
export { type FailRule, MemorySqs as FakeSqs, type SqsCall } from '../../lib/testing/memory-sqs.ts';
