/**
 * The embedded SQS emulator (fauxqs) for tests, listening on 127.0.0.1 only. fauxqs's own
 * `startFauxqs` listens on 0.0.0.0 whatever its options (fauxqs 2.4 app.js), which opens an SQS
 * that takes any credentials to the network; its exported `buildApp` is listened on here instead,
 * as the local runtime does (lib/local/emulators.ts, startEmbeddedSqs). Unlike the local runtime,
 * fauxqs's body character check is left as fauxqs ships it.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from 'fauxqs';

/** A running fauxqs on a free port of 127.0.0.1. */
export interface LoopbackFauxqs {
  /** Its port. */
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly address: string;
  /** Stops listening and ends every connection. */
  stop(): Promise<void>;
}

/** Starts fauxqs (no logger) on a free port of 127.0.0.1. */
export async function startLoopbackFauxqs(): Promise<LoopbackFauxqs> {
  const app = buildApp({ logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return { port, address: `http://127.0.0.1:${port}`, stop: () => app.close() };
}
