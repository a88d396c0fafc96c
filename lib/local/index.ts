/**
 * Local runtime: the stack's synthesized template and bundled functions running on embedded
 * emulators (fauxqs, dynalite) or on external SQS/DynamoDB endpoints. Entry point:
 * {@link startLocalRuntime}.
 */
export { type AssemblyStack, functionAssetDir, listStacks, readStack } from './cloud-assembly.ts';
export {
  ENDPOINT_ENV,
  type EndpointOptions,
  type Endpoints,
  type RunningEmulators,
  resolveEndpointOptions,
  startEmulators,
} from './emulators.ts';
export {
  CloudAssemblyError,
  DrainTimeoutError,
  LocalRuntimeError,
  ProvisionError,
  SynthError,
  TemplateResolutionError,
  UnsupportedFunctionError,
  UnsupportedIntrinsicError,
} from './errors.ts';
export { emptyStats, type FunctionStats, type InvocationReport } from './event-source-mapping.ts';
export { LostResponseFault, RateFault, seededRandom } from './faults.ts';
export type { FunctionLogLine } from './function-host.ts';
export { createLambdaContext, type LambdaContextInput } from './lambda-context.ts';
export { dependencyOrder, referencedResources } from './provision/order.ts';
export type { ProvisionedQueue } from './provision/queues.ts';
export type { ProvisionedTable } from './provision/tables.ts';
export {
  DEFAULT_MAPPING_CONCURRENCY,
  DEFAULT_REGION,
  type DrainOptions,
  type LocalQueue,
  type LocalRuntime,
  type LocalRuntimeOptions,
  type LocalWorker,
  type QueueDepth,
  RUNTIME_ENV,
  type RuntimeStats,
  startLocalRuntime,
} from './runtime.ts';
export {
  type FireNowOptions,
  type FiringRecord,
  type LocalScheduler,
  ManualClock,
  type SchedulerClock,
  type SchedulerEmulator,
  type SchedulerEmulatorOptions,
  type SchedulerStats,
  startSchedulerEmulator,
  systemClock,
} from './scheduler/index.ts';
export { type BatchVerdict, interpretBatchResponse, toSqsRecord } from './sqs-event.ts';
export {
  type EnsureSynthesizedOptions,
  ensureSynthesized,
  isAssemblyFresh,
  type SynthResult,
} from './synth.ts';
export {
  type CfnTemplate,
  NO_VALUE,
  type PseudoParameters,
  TemplateResolver,
} from './template-resolver.ts';
