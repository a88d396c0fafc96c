/**
 * What the local runtime's HTTP proxies (fault-proxy.ts, trace-header-proxy.ts) share when they
 * forward a request: the headers that may travel on, and reading a whole body.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** Hop-by-hop headers: they describe one connection and are not forwarded (RFC 9110, 7.6.1). */
const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
];

/**
 * The headers to send on: all but the hop-by-hop ones and `dropped` (lowercase names), with
 * `content-length` set to the length of the body forwarded, in bytes.
 */
export function forwardHeaders(
  headers: IncomingHttpHeaders,
  bodyLength: number,
  dropped: readonly string[] = [],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.includes(name) || dropped.includes(name)) continue;
    out[name] = value;
  }
  out['content-length'] = String(bodyLength);
  return out;
}

/** Reads a request or response body to the end. */
export async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
