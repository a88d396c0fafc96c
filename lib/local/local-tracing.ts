/**
 * The X-Ray side of a local run, started with the runtime: the `AWSTraceHeader` proxy in front
 * of the SQS endpoint (trace-header-proxy.ts) and the stand-in X-Ray daemon
 * (xray-daemon.ts) whose address the functions get, as Lambda gives it.
 */
import { startTraceHeaderProxy, type TraceHeaderProxy } from './trace-header-proxy.ts';
import { startXrayDaemonSink, type XrayDaemonSink } from './xray-daemon.ts';

/** Started by {@link startLocalTracing}. */
export interface LocalTracing {
  readonly proxy: TraceHeaderProxy;
  readonly daemon: XrayDaemonSink;
  /**
   * What Lambda sets for X-Ray in every function's environment (Lambda Developer Guide, "Defined
   * runtime environment variables"): the daemon's address and the context-missing strategy.
   */
  readonly functionEnvironment: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/** Starts the proxy in front of `sqsEndpoint` and the daemon sink. */
export async function startLocalTracing(sqsEndpoint: string, sqsPort = 0): Promise<LocalTracing> {
  const proxy = await startTraceHeaderProxy(sqsEndpoint, sqsPort);
  let daemon: XrayDaemonSink;
  try {
    daemon = await startXrayDaemonSink();
  } catch (error) {
    await proxy.close();
    throw error;
  }
  const [host, port] = daemon.address.split(':') as [string, string];
  return {
    proxy,
    daemon,
    functionEnvironment: {
      AWS_XRAY_DAEMON_ADDRESS: daemon.address,
      _AWS_XRAY_DAEMON_ADDRESS: host,
      _AWS_XRAY_DAEMON_PORT: port,
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
    },
    async close() {
      await Promise.all([proxy.close(), daemon.close()]);
    },
  };
}
