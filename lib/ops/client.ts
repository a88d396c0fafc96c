/**
 * The SQS client of the operator CLI: region and endpoint from flags, the queue URL and the usual
 * AWS environment. The SDK itself reads credentials (`AWS_PROFILE`, `AWS_ACCESS_KEY_ID`...).
 *
 * The endpoint variables `AWS_ENDPOINT_URL_SQS` and `AWS_ENDPOINT_URL` (AWS SDKs and Tools
 * Reference Guide, "Service-specific endpoints"; `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` turns
 * them off) are read here and passed as the client's `endpoint`: the SQS client sends each request
 * to the host of its `QueueUrl` unless an endpoint is set on the client itself
 * (`useQueueUrlAsEndpoint`), and emulator queue URLs such as fauxqs's
 * `http://sqs.us-east-1.localhost:4566/...` do not resolve.
 */
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { InvalidQueueUrlError } from './errors.ts';
import { regionFromQueueUrl } from './queue.ts';

/** Connection timeouts of the CLI's client, ms. */
export const CLIENT_TIMEOUTS_MS = {
  /** Time to open a connection: an unreachable endpoint fails fast. */
  connection: 5_000,
  /** Time for a response; above the longest long poll (20 s). */
  request: 30_000,
} as const;

/** Region used with a custom endpoint when nothing names one (emulators accept any). */
export const EMULATOR_DEFAULT_REGION = 'us-east-1';

/** Inputs of {@link opsClientConfig}. */
export interface OpsClientInput {
  /** `--endpoint`: an SQS-compatible endpoint (emulator). */
  readonly endpoint?: string | undefined;
  /** `--region`. */
  readonly region?: string | undefined;
  /**
   * `--profile`: a profile of the AWS shared config and credentials files (`~/.aws/config`,
   * `~/.aws/credentials`), as the SDK v3 client option `profile`: credentials and region come
   * from it instead of `AWS_PROFILE`. @default AWS_PROFILE, else `default`
   */
  readonly profile?: string | undefined;
  /** The DLQ URL: its host names the region on AWS. */
  readonly queueUrl?: string | undefined;
  /** @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Client configuration.
 *
 * Endpoint: `--endpoint`, else `AWS_ENDPOINT_URL_SQS`, else `AWS_ENDPOINT_URL` (unless
 * `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true`), else the queue URL's origin when it is on this
 * machine (an emulator: {@link loopbackEndpointOf}), else AWS (the queue URL's host).
 * Region: `--region`, else the region in the queue URL's host (`sqs.<region>.amazonaws.com`, where
 * the request goes), else `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1` when an
 * endpoint is set (emulators), else the SDK's own resolution (the `--profile` profile, else
 * `AWS_PROFILE`'s). Credentials: the SDK's default chain, from the `--profile` profile when given.
 *
 * @throws {InvalidQueueUrlError} when the endpoint is not an http(s) URL (naming where it came from).
 */
export function opsClientConfig(input: OpsClientInput): SQSClientConfig {
  const env = input.env ?? process.env;
  const fromEnv =
    env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true'
      ? undefined
      : env.AWS_ENDPOINT_URL_SQS
        ? { url: env.AWS_ENDPOINT_URL_SQS, source: 'AWS_ENDPOINT_URL_SQS' }
        : env.AWS_ENDPOINT_URL
          ? { url: env.AWS_ENDPOINT_URL, source: 'AWS_ENDPOINT_URL' }
          : undefined;
  const endpoint =
    input.endpoint !== undefined
      ? { url: input.endpoint, source: '--endpoint' }
      : (fromEnv ?? loopbackEndpointOf(input.queueUrl));
  if (endpoint !== undefined) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(endpoint.url).protocol);
    } catch {
      ok = false;
    }
    if (!ok) {
      throw new InvalidQueueUrlError(
        `${endpoint.source}: "${endpoint.url}" is not an http(s) URL (e.g. http://localhost:4566)`,
        { code: 'InvalidQueueUrl' },
      );
    }
  }
  const region =
    input.region ??
    (input.queueUrl ? regionFromQueueUrl(input.queueUrl) : undefined) ??
    (env.AWS_REGION || undefined) ??
    (env.AWS_DEFAULT_REGION || undefined) ??
    (endpoint === undefined ? undefined : EMULATOR_DEFAULT_REGION);
  return {
    logger: warnOnce(),
    ...(input.profile === undefined ? {} : { profile: input.profile }),
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint: endpoint.url }),
    requestHandler: {
      connectionTimeout: CLIENT_TIMEOUTS_MS.connection,
      requestTimeout: CLIENT_TIMEOUTS_MS.request,
    },
  };
}

/**
 * The SDK logger of a CLI client: each distinct warning once (on stderr, as the SDK's own
 * `console.warn`), nothing else. The SQS client warns on every request whose QueueUrl host differs
 * from its endpoint (middleware-sdk-sqs `useQueueUrlAsEndpoint`); one command sends many.
 */
function warnOnce(): NonNullable<SQSClientConfig['logger']> {
  const seen = new Set<string>();
  const quiet = () => {};
  return {
    debug: quiet,
    info: quiet,
    warn: (...content: unknown[]) => {
      const text = content.map(String).join(' ');
      if (seen.has(text)) return;
      seen.add(text);
      console.warn(...content);
    },
    error: (...content: unknown[]) => console.error(...content),
  };
}

/**
 * The endpoint of a queue URL on this machine (`localhost`, `*.localhost`, `127.0.0.0/8`, `[::1]`:
 * an emulator, e.g. `sqs-jobs local`'s `http://127.0.0.1:9324/000000000000/<name>`): its origin,
 * with a `*.localhost` host (fauxqs's `sqs.us-east-1.localhost`) as `localhost`, a name that
 * resolves everywhere. Without it, a command given only such a URL would send the requests that
 * name no queue URL (the DLQ's, found by ARN) to AWS. Undefined for any other URL.
 */
function loopbackEndpointOf(queueUrl: string | undefined): { url: string; source: string } | undefined {
  if (queueUrl === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(queueUrl);
  } catch {
    return undefined;
  }
  const host = url.hostname;
  const loopback =
    host === 'localhost' ||
    host === '[::1]' ||
    /^127(?:\.\d{1,3}){3}$/.test(host) ||
    host.endsWith('.localhost');
  if (!loopback || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  if (host.endsWith('.localhost')) url.hostname = 'localhost';
  return { url: url.origin, source: 'the queue URL' };
}

/** An `SQSClient` configured by {@link opsClientConfig}. */
export function createOpsSqsClient(input: OpsClientInput): SQSClient {
  return new SQSClient(opsClientConfig(input));
}

/**
 * The DynamoDB endpoint of a command that reads the idempotency table: `--dynamodb-endpoint`,
 * else `--endpoint` (one endpoint for both services: moto server, LocalStack), else the
 * environment the AWS SDKs read (`AWS_ENDPOINT_URL_DYNAMODB`, then `AWS_ENDPOINT_URL`, unless
 * `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`; "Service-specific endpoints", AWS SDKs and Tools
 * reference guide), else undefined (AWS). `AWS_ENDPOINT_URL_SQS` is never used for DynamoDB: the
 * local runtime's two emulators listen on different ports.
 * @throws {InvalidQueueUrlError} when the chosen value is not an http(s) URL (names its source).
 */
export function dynamodbEndpointOf(
  flags: { readonly dynamodbEndpoint?: string | undefined; readonly endpoint?: string | undefined },
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  return serviceEndpointOf(
    { url: flags.dynamodbEndpoint, source: '--dynamodb-endpoint' },
    flags.endpoint,
    'AWS_ENDPOINT_URL_DYNAMODB',
    'http://localhost:8000',
    env,
  );
}

/**
 * The EventBridge Scheduler endpoint of `sqs-jobs schedules`: `--scheduler-endpoint`, else
 * `--endpoint` (one endpoint for every service), else `AWS_ENDPOINT_URL_SCHEDULER` (what
 * `sqs-jobs local` prints for its Scheduler emulator), then `AWS_ENDPOINT_URL`, unless
 * `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`; else undefined (AWS).
 * @throws {InvalidQueueUrlError} when the chosen value is not an http(s) URL (names its source).
 */
export function schedulerEndpointOf(
  flags: { readonly schedulerEndpoint?: string | undefined; readonly endpoint?: string | undefined },
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  return serviceEndpointOf(
    { url: flags.schedulerEndpoint, source: '--scheduler-endpoint' },
    flags.endpoint,
    'AWS_ENDPOINT_URL_SCHEDULER',
    'http://localhost:4567',
    env,
  );
}

/** The endpoint of a service: its own flag, `--endpoint`, its variable, `AWS_ENDPOINT_URL`; checked. */
function serviceEndpointOf(
  own: { readonly url: string | undefined; readonly source: string },
  endpoint: string | undefined,
  variable: string,
  example: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const ignoreEnv = env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true';
  const chosen =
    own.url !== undefined
      ? { url: own.url, source: own.source }
      : endpoint !== undefined
        ? { url: endpoint, source: '--endpoint' }
        : ignoreEnv
          ? undefined
          : env[variable]
            ? { url: env[variable] as string, source: variable }
            : env.AWS_ENDPOINT_URL
              ? { url: env.AWS_ENDPOINT_URL, source: 'AWS_ENDPOINT_URL' }
              : undefined;
  if (chosen === undefined) return undefined;
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(chosen.url).protocol);
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new InvalidQueueUrlError(
      `${chosen.source}: "${chosen.url}" is not an http(s) URL (e.g. ${example})`,
      { code: 'InvalidQueueUrl' },
    );
  }
  return chosen.url;
}
