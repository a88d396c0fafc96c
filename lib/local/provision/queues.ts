/**
 * `AWS::SQS::Queue`: CreateQueue with the template's attributes (`VisibilityTimeout`,
 * `MessageRetentionPeriod`, `MaximumMessageSize`, `DelaySeconds`, `ReceiveMessageWaitTimeSeconds`,
 * `FifoQueue`, `ContentBasedDeduplication`, `DeduplicationScope`, `FifoThroughputLimit`,
 * `RedrivePolicy`, `RedriveAllowPolicy`) and tags; encryption settings (`KmsMasterKeyId`,
 * `KmsDataKeyReusePeriodSeconds`, `SqsManagedSseEnabled`) have no local meaning and are left out.
 * `Ref` = queue URL; `Fn::GetAtt` `Arn`, `QueueName`, `QueueUrl`.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { ProvisionError, TemplateResolutionError } from '../errors.ts';
import type { CfnResource } from '../template-resolver.ts';
import { isErrorNamed } from './aws-errors.ts';
import type { ProvisionContext } from './context.ts';
import { generatedName } from './names.ts';
import type { ResourceValue } from './resource-values.ts';

/** A queue created from the template. */
export interface ProvisionedQueue {
  /** Logical id in the template. */
  readonly logicalId: string;
  /** Physical queue name (ends with `.fifo` for FIFO queues). */
  readonly name: string;
  /** Queue URL, with the origin of the SQS endpoint in use. */
  readonly url: string;
  /** Queue ARN as the emulator reports it. */
  readonly arn: string;
  /** FIFO queue? */
  readonly fifo: boolean;
  /** The attributes sent to CreateQueue (strings, as the SQS API takes them). */
  readonly attributes: Readonly<Record<string, string>>;
  /** The redrive policy, when the template gives one. */
  readonly redrive?: {
    /** ARN of the dead-letter queue. */
    readonly deadLetterTargetArn: string;
    /** Receives before a message moves to the DLQ. */
    readonly maxReceiveCount: number;
  };
  /** The template's tags of the queue, when it has any. */
  readonly tags?: Readonly<Record<string, string>>;
}

/** Where queues are created: the SQS client and its endpoint. */
export interface QueueTarget {
  readonly sqs: SQSClient;
  /** SQS endpoint URL: queue URLs are rewritten to its origin (see {@link normaliseQueueUrl}). */
  readonly sqsEndpoint: string;
}

const QUEUE_ATTRIBUTE_PROPERTIES = [
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'DelaySeconds',
  'FifoQueue',
  'FifoThroughputLimit',
  'MaximumMessageSize',
  'MessageRetentionPeriod',
  'ReceiveMessageWaitTimeSeconds',
  'RedriveAllowPolicy',
  'RedrivePolicy',
  'VisibilityTimeout',
] as const;

const QUEUE_NAME_MAX = 80;

/**
 * The queue URL with the origin of the endpoint in use. fauxqs answers CreateQueue with URLs on
 * `sqs.<region>.localhost:<port>`, a host name that does not resolve on every machine; the AWS
 * SDK sends each request to the QueueUrl's host when its endpoint comes from `AWS_ENDPOINT_URL`
 * (middleware-sdk-sqs `useQueueUrlAsEndpoint`), so workers would fail. Emulators find a queue by
 * the URL's path (`/<account>/<name>`), so the endpoint's origin works for all of them.
 */
export function normaliseQueueUrl(queueUrl: string, endpoint: string): string {
  const url = new URL(queueUrl);
  return `${new URL(endpoint).origin}${url.pathname}`;
}

/** What `Ref` and `Fn::GetAtt` of a created queue return. */
export function queueValue(queue: ProvisionedQueue): ResourceValue {
  return { ref: queue.url, atts: { Arn: queue.arn, QueueName: queue.name, QueueUrl: queue.url } };
}

function stringAttribute(value: unknown, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  throw new TemplateResolutionError(`cannot use ${String(value)} as a queue attribute at ${path}`, {
    context: { path },
  });
}

/**
 * Creates the queue of template resource `logicalId` (at template path `path`), after deleting a
 * queue of the same name when `ctx.existing` is `recreate`.
 * @throws {TemplateResolutionError} when a property cannot resolve.
 * @throws {ProvisionError} when the emulator refuses it (its error as `cause`).
 */
export async function createQueue(
  ctx: ProvisionContext,
  target: QueueTarget,
  logicalId: string,
  resource: CfnResource,
  path: string,
): Promise<ProvisionedQueue> {
  const { sqs } = target;
  const props = ctx.resolver.resolve(resource.Properties ?? {}, `${path}.Properties`) as Record<
    string,
    unknown
  >;
  const fifo = props.FifoQueue === true || props.FifoQueue === 'true';
  const name =
    typeof props.QueueName === 'string'
      ? props.QueueName
      : generatedName(ctx.stackName, logicalId, QUEUE_NAME_MAX, fifo ? '.fifo' : '');
  const attributes: Record<string, string> = {};
  for (const key of QUEUE_ATTRIBUTE_PROPERTIES) {
    const value = props[key];
    if (value === undefined || (key === 'FifoQueue' && !fifo)) continue;
    attributes[key] = stringAttribute(value, `${path}.Properties.${key}`);
  }
  const tags: Record<string, string> = {};
  for (const tag of (props.Tags as { Key: string; Value: string }[] | undefined) ?? [])
    tags[tag.Key] = String(tag.Value);
  let redrive: ProvisionedQueue['redrive'];
  const rp = props.RedrivePolicy as { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown } | undefined;
  if (rp && typeof rp.deadLetterTargetArn === 'string') {
    redrive = { deadLetterTargetArn: rp.deadLetterTargetArn, maxReceiveCount: Number(rp.maxReceiveCount) };
  }
  try {
    if (ctx.existing === 'recreate') await deleteQueueIfExists(target, name);
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: attributes,
        tags: Object.keys(tags).length > 0 ? tags : undefined,
      }),
    );
    const url = normaliseQueueUrl(created.QueueUrl as string, target.sqsEndpoint);
    const got = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    const arn = got.Attributes?.QueueArn;
    if (!arn) throw new Error('GetQueueAttributes returned no QueueArn');
    return {
      logicalId,
      name,
      url,
      arn,
      fifo,
      attributes,
      redrive,
      ...(Object.keys(tags).length > 0 ? { tags } : {}),
    };
  } catch (cause) {
    throw new ProvisionError(`cannot create queue ${name} (${logicalId}): ${(cause as Error).message}`, {
      cause,
      context: { logicalId, name, attributes },
    });
  }
}

async function deleteQueueIfExists(target: QueueTarget, name: string): Promise<void> {
  try {
    const found = await target.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    if (found.QueueUrl) {
      await target.sqs.send(
        new DeleteQueueCommand({ QueueUrl: normaliseQueueUrl(found.QueueUrl, target.sqsEndpoint) }),
      );
    }
  } catch (error) {
    if (
      !isErrorNamed(error, 'QueueDoesNotExist', 'NonExistentQueue', 'AWS.SimpleQueueService.NonExistentQueue')
    ) {
      throw error;
    }
  }
}
