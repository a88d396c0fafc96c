/**
 * Runs the `sqs-jobs` CLI in-process against an SQS endpoint (the emulator): output captured,
 * no terminal, an empty environment, and SQS clients with test credentials on `endpoint`.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { type CliIo, runSqsJobsCli } from '../../lib/cli/index.ts';
import { opsClientConfig } from '../../lib/ops/client.ts';

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

/** Exit code and output of one run. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `sqs-jobs <argv>`. Its SQS clients always reach `endpoint`, even when `argv` names no
 * `--endpoint` (a run "against AWS" still talks to the emulator); `io` overrides any part.
 */
export async function runCli(
  argv: readonly string[],
  endpoint: string,
  io: Partial<CliIo> = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runSqsJobsCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdinIsTTY: false,
    env: {},
    createSqs: (input) =>
      new SQSClient({
        ...opsClientConfig({ ...input, endpoint: input.endpoint ?? endpoint }),
        credentials: CREDENTIALS,
      }),
    ...io,
  });
  return { code, stdout, stderr };
}

/**
 * `createSqs` for a run against an endpoint nothing listens on: the CLI's own client settings,
 * test credentials, one attempt (no SDK retries, so the refusal comes at once).
 */
export const singleAttemptSqs: CliIo['createSqs'] = (input) =>
  new SQSClient({ ...opsClientConfig(input), credentials: CREDENTIALS, maxAttempts: 1 });
