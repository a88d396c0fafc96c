/**
 * `AWS::Lambda::EventSourceMapping`: resolved once every queue and function of the stack is
 * known, and kept when its source is a queue of the stack (event-source-mapping.ts emulates it);
 * a mapping on any other source is skipped with a warning.
 */
import { TemplateResolutionError } from '../errors.ts';
import type { CfnResource } from '../template-resolver.ts';
import type { ProvisionContext } from './context.ts';
import type { FunctionResource } from './functions.ts';
import type { ProvisionedQueue } from './queues.ts';

/** An `AWS::Lambda::EventSourceMapping` on one of the stack's queues, resolved. */
export interface EventSourceMappingResource {
  readonly logicalId: string;
  readonly functionLogicalId: string;
  readonly queueLogicalId: string;
  /** `BatchSize`. @default 10 */
  readonly batchSize: number;
  /** `MaximumBatchingWindowInSeconds`. @default 0 */
  readonly maximumBatchingWindowSeconds: number;
  /** `ScalingConfig.MaximumConcurrency`; undefined when not set. */
  readonly maximumConcurrency: number | undefined;
  /** `FunctionResponseTypes` includes `ReportBatchItemFailures`. */
  readonly reportBatchItemFailures: boolean;
  /** `Enabled`. @default true */
  readonly enabled: boolean;
}

/**
 * The mapping of template resource `logicalId`, or undefined (and a warning) when its
 * `EventSourceArn` is not one of `queues` (matched by ARN, else by the queue name in the ARN).
 * @throws {TemplateResolutionError} when it has `FilterCriteria` (not emulated) or targets a
 *   function that is not one of `functions`.
 */
export function resolveMapping(
  ctx: ProvisionContext,
  queues: readonly ProvisionedQueue[],
  functions: readonly FunctionResource[],
  logicalId: string,
  resource: CfnResource,
  path: string,
): EventSourceMappingResource | undefined {
  const props = ctx.resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
    string,
    unknown
  >;
  const sourceArn = props.EventSourceArn;
  const queue =
    typeof sourceArn === 'string'
      ? (queues.find((q) => q.arn === sourceArn) ??
        (sourceArn.startsWith('arn:') && sourceArn.split(':')[2] === 'sqs'
          ? queues.find((q) => q.name === sourceArn.split(':')[5])
          : undefined))
      : undefined;
  if (!queue) {
    ctx.warnings.push(
      `event source mapping ${logicalId} is skipped: its source ${String(sourceArn)} is not a queue of this stack`,
    );
    return undefined;
  }
  if (props.FilterCriteria !== undefined) {
    throw new TemplateResolutionError(
      `event source mapping ${logicalId} has FilterCriteria, which the local runtime does not emulate`,
      { context: { path: `${path}.Properties.FilterCriteria`, logicalId } },
    );
  }
  const functionName = String(props.FunctionName ?? '');
  const fn = functions.find(
    (f) => f.name === functionName || f.arn === functionName || f.arn === functionName.replace(/:[^:]+$/, ''),
  );
  if (!fn) {
    throw new TemplateResolutionError(
      `event source mapping ${logicalId} targets function ${functionName}, which is not in this stack`,
      { context: { path: `${path}.Properties.FunctionName`, logicalId } },
    );
  }
  const scaling = props.ScalingConfig as { MaximumConcurrency?: unknown } | undefined;
  const types = (props.FunctionResponseTypes as unknown[] | undefined) ?? [];
  return {
    logicalId,
    functionLogicalId: fn.logicalId,
    queueLogicalId: queue.logicalId,
    batchSize: props.BatchSize === undefined ? 10 : Number(props.BatchSize),
    maximumBatchingWindowSeconds:
      props.MaximumBatchingWindowInSeconds === undefined ? 0 : Number(props.MaximumBatchingWindowInSeconds),
    maximumConcurrency:
      scaling?.MaximumConcurrency === undefined ? undefined : Number(scaling.MaximumConcurrency),
    reportBatchItemFailures: types.includes('ReportBatchItemFailures'),
    enabled: props.Enabled === undefined ? true : props.Enabled === true || props.Enabled === 'true',
  };
}
