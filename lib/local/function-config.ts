/**
 * What a mapped Lambda function needs to run locally, read from its template resource: handler,
 * runtime, timeout, memory, the bundled code's directory in the cloud assembly, and its
 * environment (the template's `Environment.Variables`, resolved, plus what Lambda itself sets,
 * pointed at the emulators).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AssemblyStack, functionAssetDir } from './cloud-assembly.ts';
import { UnsupportedFunctionError } from './errors.ts';
import type { HostedFunction } from './function-host.ts';
import type { FunctionResource } from './provision/functions.ts';
import type { TemplateResolver } from './template-resolver.ts';

/** Lambda's default `Timeout`, in seconds (CreateFunction API). */
export const DEFAULT_TIMEOUT_SECONDS = 3;
/** Lambda's default `MemorySize`, in MB (CreateFunction API). */
export const DEFAULT_MEMORY_SIZE_MB = 128;

/** A function resolved from the template, ready to host. */
export interface FunctionDefinition extends HostedFunction {
  /** `Runtime`, e.g. `nodejs24.x`. */
  readonly runtime: string;
  /** The template's `Environment.Variables`, resolved to strings. */
  readonly templateEnvironment: Readonly<Record<string, string>>;
  /** `ReservedConcurrentExecutions`; undefined when not set. */
  readonly reservedConcurrency: number | undefined;
}

/**
 * Resolves a function of the template.
 * @throws {UnsupportedFunctionError} for a non-Node.js runtime, a container image, or inline code.
 * @throws {CloudAssemblyError} when its code asset is not in the assembly.
 * @throws {TemplateResolutionError} when a property cannot resolve.
 */
export function resolveFunction(
  stack: AssemblyStack,
  resolver: TemplateResolver,
  fn: FunctionResource,
): FunctionDefinition {
  const path = `Resources.${fn.logicalId}.Properties`;
  const raw = fn.resource.Properties ?? {};
  const at = (key: string) => resolver.resolve(raw[key], `${path}.${key}`);
  const runtime = raw.Runtime === undefined ? '' : resolver.resolveString(raw.Runtime, `${path}.Runtime`);
  const code = (at('Code') ?? {}) as { S3Key?: unknown; ZipFile?: unknown; ImageUri?: unknown };
  if (code.ImageUri !== undefined || raw.PackageType === 'Image') {
    throw new UnsupportedFunctionError(
      `function ${fn.logicalId} is a container image; only Node.js zip functions run locally`,
      {
        context: { logicalId: fn.logicalId },
      },
    );
  }
  if (!runtime.startsWith('nodejs')) {
    throw new UnsupportedFunctionError(
      `function ${fn.logicalId} has runtime ${runtime || '(none)'}; only Node.js runtimes run locally`,
      { context: { logicalId: fn.logicalId, runtime } },
    );
  }
  if (code.ZipFile !== undefined) {
    throw new UnsupportedFunctionError(
      `function ${fn.logicalId} has inline code (ZipFile), which does not run locally`,
      {
        context: { logicalId: fn.logicalId },
      },
    );
  }
  const handler = raw.Handler === undefined ? '' : resolver.resolveString(raw.Handler, `${path}.Handler`);
  if (handler === '') {
    throw new UnsupportedFunctionError(`function ${fn.logicalId} has no Handler`, {
      context: { logicalId: fn.logicalId },
    });
  }
  const assetDir = functionAssetDir(
    stack,
    fn.logicalId,
    fn.resource,
    typeof code.S3Key === 'string' ? code.S3Key : undefined,
  );
  const variables = ((at('Environment') as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
    {}) as Record<string, unknown>;
  const templateEnvironment: Record<string, string> = {};
  for (const [key, value] of Object.entries(variables)) {
    templateEnvironment[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  const number = (key: string, fallback: number) => (raw[key] === undefined ? fallback : Number(at(key)));
  const reserved =
    raw.ReservedConcurrentExecutions === undefined ? undefined : Number(at('ReservedConcurrentExecutions'));
  return {
    logicalId: fn.logicalId,
    name: fn.name,
    arn: fn.arn,
    handler,
    runtime,
    assetDir,
    timeoutSeconds: number('Timeout', DEFAULT_TIMEOUT_SECONDS),
    memorySizeMb: number('MemorySize', DEFAULT_MEMORY_SIZE_MB),
    templateEnvironment,
    reservedConcurrency: reserved,
  };
}

/** Credentials handed to the functions and the runtime's clients (emulators accept any). */
export interface LocalCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Inputs of {@link functionEnvironment}. */
export interface FunctionEnvironmentInput {
  readonly fn: FunctionDefinition;
  readonly region: string;
  readonly endpoints: { readonly sqs: string; readonly dynamodb: string; readonly scheduler?: string };
  readonly credentials: LocalCredentials;
  /** Added last; wins over everything (e.g. `EXTERNAL_API_URL`). */
  readonly overrides?: Readonly<Record<string, string>>;
}

/**
 * The complete environment of a function's execution environment, in this order (later wins):
 * 1. the template's `Environment.Variables`;
 * 2. what Lambda sets (Lambda Developer Guide, "Defined runtime environment variables"):
 *    `AWS_REGION`, `AWS_DEFAULT_REGION`, `AWS_LAMBDA_FUNCTION_NAME`, `AWS_LAMBDA_FUNCTION_VERSION`
 *    (`$LATEST`), `AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, `AWS_LAMBDA_LOG_GROUP_NAME`,
 *    `AWS_LAMBDA_LOG_STREAM_NAME`, `AWS_LAMBDA_INITIALIZATION_TYPE` (`on-demand`),
 *    `AWS_EXECUTION_ENV`, `LAMBDA_TASK_ROOT` (the asset directory), `_HANDLER`, and credentials
 *    `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN` (dummies);
 * 3. the endpoints: `AWS_ENDPOINT_URL` = the SQS endpoint, and when DynamoDB is elsewhere also
 *    `AWS_ENDPOINT_URL_SQS` and `AWS_ENDPOINT_URL_DYNAMODB` (service-specific endpoint variables
 *    of the AWS SDKs), and `AWS_ENDPOINT_URL_SCHEDULER` = the local EventBridge Scheduler; `AWS_CONFIG_FILE` / `AWS_SHARED_CREDENTIALS_FILE` point at a file that does
 *    not exist, so a developer's own AWS profile never leaks in;
 * 4. `overrides`.
 * Nothing of the host's `process.env` is copied.
 */
export function functionEnvironment(input: FunctionEnvironmentInput): Record<string, string> {
  const { fn, region, endpoints, credentials } = input;
  const noFile = join(tmpdir(), 'sqs-jobs-local-no-aws-config');
  const env: Record<string, string> = {
    ...fn.templateEnvironment,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySizeMb),
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `local/[$LATEST]${fn.logicalId}`,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    LAMBDA_TASK_ROOT: fn.assetDir,
    _HANDLER: fn.handler,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: credentials.sessionToken ?? 'local',
    AWS_CONFIG_FILE: noFile,
    AWS_SHARED_CREDENTIALS_FILE: noFile,
    AWS_ENDPOINT_URL: endpoints.sqs,
  };
  if (endpoints.dynamodb !== endpoints.sqs) {
    env.AWS_ENDPOINT_URL_SQS = endpoints.sqs;
    env.AWS_ENDPOINT_URL_DYNAMODB = endpoints.dynamodb;
  }
  // Without it, AWS_ENDPOINT_URL (the SQS endpoint) would also serve the Scheduler client.
  if (endpoints.scheduler !== undefined) env.AWS_ENDPOINT_URL_SCHEDULER = endpoints.scheduler;
  return { ...env, ...input.overrides };
}
