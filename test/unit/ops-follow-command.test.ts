/**
 * The "follow its chain" command of `sqs-jobs dlq show` on AWS (no emulator endpoints): it names
 * the DLQ and the table given to `dlq show`, the profile when one was given, the region only
 * when the DLQ URL does not name it; without a table it says so instead of printing a command
 * that fails for want of one. (On the emulators the command is run as printed: test/integration/
 * job-story.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { cliCommand, followFor, TABLE_PLACEHOLDER } from '../../lib/cli/follow.ts';
import type { CliIo } from '../../lib/cli/index.ts';

const DLQ = 'https://sqs.eu-west-1.amazonaws.com/123456789012/jobs-dlq';
const JOB = { type: 'payments.capture', source: '/services/checkout', id: "o'42" };
const io = (env: Record<string, string> = {}): CliIo => ({
  stdout: { write: () => true },
  stderr: { write: () => true },
  stdinIsTTY: false,
  env,
});

describe('dlq show: the command that follows a chain', () => {
  it('names the job, the DLQ and the table given, quoting what the shell would split', async () => {
    const follow = await followFor(
      { dlqUrl: DLQ, idempotencyTable: ['jobs-idempotency'], profile: 'ops' },
      { queueUrl: DLQ, profile: 'ops', env: {} },
      io(),
    );
    expect(follow.command(JOB)).toBe(
      `sqs-jobs job payments.capture --source /services/checkout --id 'o'\\''42' --dlq-url ${DLQ} --idempotency-table jobs-idempotency --profile ops`,
    );
    expect(follow.notes).toEqual([]);
  });

  it('without a table on AWS, leaves a placeholder and says where the name is', async () => {
    const follow = await followFor({ dlqUrl: DLQ }, { queueUrl: DLQ, env: {} }, io());
    expect(follow.command(JOB)).toContain(`--idempotency-table ${TABLE_PLACEHOLDER}`);
    expect(follow.notes).toEqual([
      `note: replace ${TABLE_PLACEHOLDER} in "follow its chain" with the idempotency table (the stack output IdempotencyTableName), or give it to dlq show with --idempotency-table`,
    ]);
  });

  it('carries the region when the DLQ URL does not name it', async () => {
    const url = 'https://vpce-1.sqs.example.internal/123456789012/jobs-dlq';
    const follow = await followFor(
      { dlqUrl: url, idempotencyTable: ['t'] },
      { queueUrl: url, env: { AWS_REGION: 'ap-south-1' } },
      io({ AWS_REGION: 'ap-south-1' }),
    );
    expect(follow.command(JOB)).toMatch(/ --region ap-south-1$/);
  });

  it('starts with the CLI as it was started: npm run sqs-jobs --, npx sqs-jobs, or sqs-jobs', () => {
    expect(cliCommand({ npm_lifecycle_event: 'sqs-jobs' })).toBe('npm run sqs-jobs --');
    expect(cliCommand({ npm_lifecycle_event: 'npx' })).toBe('npx sqs-jobs');
    expect(cliCommand({})).toBe('sqs-jobs');
  });
});
