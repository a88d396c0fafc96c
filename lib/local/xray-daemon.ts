/**
 * A stand-in for the X-Ray daemon Lambda runs beside a traced function: a UDP socket on
 * 127.0.0.1 that receives the segment documents the functions' X-Ray SDK sends (each datagram is
 * the header `{"format": "json", "version": 1}`, a newline, and one segment or subsegment
 * document) and keeps them, so a local run shows what a deployed one would record and tests can
 * assert on it. Nothing is forwarded anywhere. The functions find it through
 * `AWS_XRAY_DAEMON_ADDRESS`, as in Lambda [lambda-x-ray].
 *
 * - lambda-x-ray: https://docs.aws.amazon.com/lambda/latest/dg/services-xray.html
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/** Documents kept at most (the oldest are dropped first; `received` keeps counting). */
export const MAX_KEPT_SEGMENTS = 10_000;

/** A segment document as received (the fields this project reads; the rest is kept as is). */
export interface XraySegmentDocument {
  readonly name?: string;
  readonly id?: string;
  readonly trace_id?: string;
  readonly parent_id?: string;
  readonly type?: string;
  readonly start_time?: number;
  readonly end_time?: number;
  readonly error?: boolean;
  readonly fault?: boolean;
  readonly annotations?: Readonly<Record<string, string | number | boolean>>;
  readonly metadata?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly [key: string]: unknown;
}

/** A running sink. */
export interface XrayDaemonSink {
  /** `127.0.0.1:<port>`, the value of `AWS_XRAY_DAEMON_ADDRESS`. */
  readonly address: string;
  /** The documents received, oldest first (at most {@link MAX_KEPT_SEGMENTS}). */
  segments(): readonly XraySegmentDocument[];
  /** Documents received in all. */
  readonly received: number;
  close(): Promise<void>;
}

/** Starts the sink on a free UDP port of 127.0.0.1. */
export async function startXrayDaemonSink(): Promise<XrayDaemonSink> {
  const socket = createSocket('udp4');
  const kept: XraySegmentDocument[] = [];
  let received = 0;
  socket.on('message', (datagram) => {
    const text = datagram.toString('utf8');
    const newline = text.indexOf('\n');
    try {
      const document = JSON.parse(newline >= 0 ? text.slice(newline + 1) : text) as XraySegmentDocument;
      received++;
      kept.push(document);
      if (kept.length > MAX_KEPT_SEGMENTS) kept.shift();
    } catch {
      // Not a segment document: a real daemon drops it too.
    }
  });
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  let closed = false;
  return {
    address: `127.0.0.1:${port}`,
    segments: () => [...kept],
    get received() {
      return received;
    },
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
