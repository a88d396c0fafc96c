/**
 * The AWS API boundary of a local run: what stands between the functions and the emulators, and
 * the clients that cross it. In front of the emulators' endpoints: the trace-header proxy (SQS
 * keeps each send's trace header as `AWSTraceHeader`), and with `awsFaults` one fault proxy per
 * distinct endpoint. The runtime's own clients (provisioning, queue depths) are exempt from the
 * faults; the pollers' SQS client, which stands for Lambda's event source mapping, is not.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsFaultRates } from '../aws-faults.ts';
import { type Endpoints, isAddressInUse, portInUseError } from '../emulators.ts';
import { exemptFromFaults, type FaultProxy, startFaultProxy } from '../fault-proxy.ts';
import type { LocalCredentials } from '../function-config.ts';
import { type LocalTracing, startLocalTracing } from '../local-tracing.ts';

/** What {@link openAwsBoundary} puts in front of the emulators. */
export interface BoundaryOptions {
  readonly region: string;
  readonly credentials: LocalCredentials;
  /** Fault rates; undefined: no fault proxy. */
  readonly awsFaults: Partial<AwsFaultRates> | undefined;
  /** Seed of the fault decisions. */
  readonly seed: number;
  /** Port of the SQS endpoint the stack is reached at (the trace-header proxy). @default 0 (any free port) */
  readonly sqsPort?: number;
}

/** The proxies in front of the emulators, and the clients on them. */
export interface AwsBoundary {
  /** The endpoints the functions and the pollers use (the proxies'). */
  readonly endpoints: Endpoints;
  readonly tracing: LocalTracing;
  /** The fault proxies; empty without `awsFaults`. */
  readonly proxies: readonly FaultProxy[];
  /** The runtime's own clients, exempt from the faults. */
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  /** Client of the pollers: `sqs`, or with fault proxies one that meets the SQS faults. */
  readonly pollerSqs: SQSClient;
  /** Destroys the clients and closes the proxies (not the emulators behind them). */
  close(): Promise<void>;
}

/**
 * Starts the proxies in front of `emulatorEndpoints` and creates the clients on them.
 * @throws the listen error of a proxy (the proxies already started are closed first), or
 *   {@link RangeError} on bad fault rates.
 */
export async function openAwsBoundary(
  emulatorEndpoints: Endpoints,
  options: BoundaryOptions,
): Promise<AwsBoundary> {
  const proxies: FaultProxy[] = [];
  let endpoints = emulatorEndpoints;
  let tracing: LocalTracing | undefined;
  try {
    // SQS keeps each send's trace header (AWSTraceHeader): emulated in front of the endpoint.
    try {
      tracing = await startLocalTracing(endpoints.sqs, options.sqsPort);
    } catch (cause) {
      throw isAddressInUse(cause) ? portInUseError('SQS', options.sqsPort ?? 0, '--sqs-port', cause) : cause;
    }
    endpoints = { ...endpoints, sqs: tracing.proxy.url };
    if (options.awsFaults !== undefined) {
      const byTarget = new Map<string, FaultProxy>();
      for (const target of new Set([endpoints.sqs, endpoints.dynamodb])) {
        const proxy = await startFaultProxy({
          target,
          rates: options.awsFaults,
          seed: options.seed + 104_729 * (proxies.length + 1),
        });
        proxies.push(proxy);
        byTarget.set(target, proxy);
      }
      endpoints = {
        ...endpoints,
        sqs: (byTarget.get(endpoints.sqs) as FaultProxy).url,
        dynamodb: (byTarget.get(endpoints.dynamodb) as FaultProxy).url,
      };
    }
  } catch (error) {
    await Promise.all(proxies.map((p) => p.close()));
    await tracing?.close();
    throw error;
  }
  const { region, credentials } = options;
  const clientConfig = (endpoint: string) => ({ endpoint, region, credentials, maxAttempts: 3 });
  const sqs = exemptFromFaults(new SQSClient(clientConfig(endpoints.sqs)));
  const dynamodb = exemptFromFaults(new DynamoDBClient(clientConfig(endpoints.dynamodb)));
  // The pollers stand for Lambda's own event source mapping: they meet the SQS faults.
  const pollerSqs = proxies.length > 0 ? new SQSClient(clientConfig(endpoints.sqs)) : sqs;
  const openTracing = tracing;
  return {
    endpoints,
    tracing: openTracing,
    proxies,
    sqs,
    dynamodb,
    pollerSqs,
    async close() {
      sqs.destroy();
      if (pollerSqs !== sqs) pollerSqs.destroy();
      dynamodb.destroy();
      await Promise.all(proxies.map((p) => p.close()));
      await openTracing.close();
    },
  };
}
