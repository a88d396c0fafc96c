/**
 * The sample stack kept up after `npm start`'s report (`--keep-running`, `--console`) or without
 * a workload (`--no-workload`): the demo booking the printed `send` commands use, the fake
 * external API listed beside the stack, and where everything is (lib/local/serve.ts), until the
 * signal aborts. The caller stops the stack.
 */
import { type StartBeside, serveRunning } from '../local/serve.ts';
import { demoSends, type SampleStack, seedDemo } from './workload.ts';

/** Options of {@link serveSampleStack}. */
export interface ServeSampleOptions {
  /** The description as one JSON line instead of text. */
  readonly json: boolean;
  /** Where the description goes. */
  readonly stdout: { write(text: string): unknown };
  /** Ends the serving when aborted (Ctrl-C). */
  readonly signal: AbortSignal;
  /** What else runs beside the stack (the console), after the fake external API. */
  readonly beside: readonly StartBeside[];
  /** Text after a report: a blank line before the description. */
  readonly afterReport: boolean;
  /** The last line of the text: how to stop, and with what exit code. */
  readonly stopLine: string;
}

/**
 * Seeds the demo booking, prints where everything is and serves the stack until `signal` aborts,
 * then closes what it started beside it (the stack itself keeps running).
 * @throws what seeding or a {@link StartBeside} throws.
 */
export async function serveSampleStack(stack: SampleStack, options: ServeSampleOptions): Promise<void> {
  await seedDemo(stack.repository);
  if (!options.json && options.afterReport) options.stdout.write('\n');
  const externalApi: StartBeside = async () => ({
    json: { externalApi: { url: stack.service.url } },
    text: [
      `Fake external API  ${stack.service.url}  (the sample's payment, mail and invoice service: EXTERNAL_API_URL of the workers)`,
    ],
  });
  await serveRunning(stack.runtime, {
    json: options.json,
    stdout: options.stdout,
    signal: options.signal,
    beside: [externalApi, ...options.beside],
    render: { cli: 'npm run sqs-jobs --', send: demoSends(stack.target), stopLine: options.stopLine },
  });
}
