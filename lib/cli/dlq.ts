/**
 * `sqs-jobs dlq list|show|redrive`: the dead-letter queues (list grouped by cause, show one,
 * filtered redrive with dry run and verification).
 *
 * Exit codes: 0 done; 1 done with problems (a redrive left messages behind, a redriven job came
 * back, `show` found nothing, a message could not be made visible again, the redrive was not
 * confirmed); 2 could not run (bad flags, invalid URL, missing queue, unreachable endpoint,
 * FIFO/standard mismatch, no confirmation possible); 130 interrupted (held messages released).
 *
 * Why one file: it is the command definition of the three `dlq` subcommands and their shared
 * flags; what they do is in lib/ops.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  DLQ_READER_DEFAULTS,
  MAX_HOLD_SECONDS,
  MAX_WAIT_TIME_SECONDS,
  type ReadDeadLettersOptions,
  readDeadLetters,
} from '../ops/dlq-reader.ts';
import { compileFilter, type DeadLetterFilter, describeFilter } from '../ops/filters.ts';
import {
  listJson,
  messageJson,
  redriveJson,
  renderList,
  renderMessage,
  renderRedrive,
  renderUnverifiedParks,
  renderVerify,
} from '../ops/format.ts';
import type { OpsSqs } from '../ops/queue.ts';
import {
  type RedrivePlan,
  type RedriveProgress,
  redriveDeadLetters,
  verifyRedrive,
} from '../ops/redrive/index.ts';
import { DEFAULT_GROUP_BY, type GroupKey, summarizeDeadLetters } from '../ops/summary.ts';
import {
  addConnectionOptions,
  type CommandRunner,
  type ConnectionFlags,
  collect,
  integer,
  nonEmpty,
  requiredOption,
} from './common.ts';
import { type FollowFlags, followFor } from './follow.ts';
import { CLI_EXIT, type CliIo, defaultSleep, statusLine } from './io.ts';

const GROUP_KEY_FLAGS: Record<string, GroupKey> = {
  reason: 'reason',
  'job-type': 'jobType',
  'error-name': 'errorName',
  'handler-version': 'handlerVersion',
};

function groupBy(value: string): GroupKey[] {
  const keys = value.split(',').map((k) => k.trim());
  return keys.map((key) => {
    const mapped = GROUP_KEY_FLAGS[key];
    if (mapped === undefined) {
      throw new InvalidArgumentError(`"${key}" is not one of ${Object.keys(GROUP_KEY_FLAGS).join(', ')}`);
    }
    return mapped;
  });
}

interface CommonFlags extends ConnectionFlags {
  readonly dlqUrl: string;
  readonly holdSeconds: number;
  readonly waitSeconds: number;
}

interface FilterFlags {
  readonly jobType?: string[];
  readonly reason?: string[];
  readonly errorName?: string[];
  readonly jobId?: string[];
}

function addCommon(command: Command): Command {
  return addConnectionOptions(
    requiredOption(command, '--dlq-url <url>', 'URL of the dead-letter queue (stack output *DlqUrl)')
      .option(
        '--hold-seconds <n>',
        'visibility timeout of messages while the command holds them (renewed while it runs); they are made ' +
          'visible again at the end, or by themselves after this long if the command dies',
        integer(1, MAX_HOLD_SECONDS),
        DLQ_READER_DEFAULTS.holdSeconds,
      )
      .option(
        '--wait-seconds <n>',
        'long-poll wait of each receive (0 = short poll, which may miss messages on AWS)',
        integer(0, MAX_WAIT_TIME_SECONDS),
        DLQ_READER_DEFAULTS.waitTimeSeconds,
      ),
  );
}

function addFilters(command: Command, verb: string): Command {
  return command
    .option(
      '--job-type <pattern>',
      `${verb} only this job type (JobType, else the body's type); * is a wildcard; repeat for several`,
      collect,
    )
    .option(
      '--reason <pattern>',
      `${verb} only this cause (ErrorReason, e.g. PermanentError, 'HTTP 404', 'attempts-used-up*'; no-evidence = no evidence attributes: moved by maxReceiveCount, or a body too large to leave room for them); repeatable`,
      collect,
    )
    .option('--error-name <pattern>', `${verb} only this error class (ErrorName); repeatable`, collect)
    .option('--job-id <id>', `${verb} only this job (envelope id); repeatable`, collect);
}

function filterOf(flags: FilterFlags): DeadLetterFilter {
  return {
    jobTypes: flags.jobType ?? [],
    reasons: flags.reason ?? [],
    errorNames: flags.errorName ?? [],
    jobIds: flags.jobId ?? [],
  };
}

/** The read settings `list` and `show` share, from the common flags. */
function readOptions(sqs: OpsSqs, flags: CommonFlags & { max: number }, io: CliIo): ReadDeadLettersOptions {
  return {
    sqs,
    queueUrl: flags.dlqUrl,
    holdSeconds: flags.holdSeconds,
    waitTimeSeconds: flags.waitSeconds,
    maxMessages: flags.max,
    ...(io.signal ? { signal: io.signal } : {}),
  };
}

const READ_NOTE = `
Reading never deletes: each message is received with a visibility timeout (--hold-seconds) and
made visible again when the command ends (also on errors and Ctrl-C). On a FIFO DLQ only the first
messages of each message group can be read that way (SQS locks a group while one is in flight).`;

const HELP_AFTER = `${READ_NOTE}

Examples:
  npx sqs-jobs dlq list --dlq-url $DLQ
  npx sqs-jobs dlq show --dlq-url $DLQ --job-id 7d0e1c52-...
  npx sqs-jobs dlq redrive --dlq-url $DLQ --target-url $QUEUE --reason 'HTTP 404' --dry-run
  npx sqs-jobs dlq redrive --dlq-url $DLQ --target-url $QUEUE --reason 'HTTP 404' --yes --verify-seconds 60
  npx sqs-jobs dlq list --dlq-url http://localhost:4566/000000000000/jobs-dlq --endpoint http://localhost:4566

On AWS, a plain full redrive (every message back to its source queue) can also be done with
StartMessageMoveTask (console: "Start DLQ redrive"). This tool does filtered redrives, keeps FIFO
order per group, and works on emulators, which do not support StartMessageMoveTask.

Environment: AWS_PROFILE / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (credentials; any values for an
emulator), AWS_REGION, AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_SQS (endpoint).

Exit codes: 0 done, 1 done with problems (messages left behind, jobs came back during the redrive
or at --verify-seconds, a verification that could not see a FIFO group, nothing found), 2 could
not run (bad flags, queue, endpoint, confirmation, a --dlq-url that is no queue's DLQ), 130
interrupted.
See docs/operations.md.`;

/** Adds `dlq` and its commands `list`, `show`, `redrive` to `program`. */
export function addDlqCommand(program: Command, runner: CommandRunner): Command {
  const { io, out, err } = runner;
  const sleep = io.sleep ?? defaultSleep;
  const dlq = program
    .command('dlq')
    .description(
      'Inspect and redrive the dead-letter queues of sqs-jobs: list messages grouped by cause, show one with its ' +
        'evidence, redrive a filtered selection (dry run first) and check that nothing comes back.',
    )
    .addHelpText('after', HELP_AFTER);

  addFilters(
    addCommon(
      dlq
        .command('list')
        .description(
          'List the DLQ grouped by cause (ErrorReason, then job type): counts, first/last failure, attempts, ' +
            'error messages and a sample. Nothing is deleted; every message is visible again afterwards.',
        ),
    ),
    'list',
  )
    .option('--max <n>', 'read at most this many messages', integer(1), DLQ_READER_DEFAULTS.maxMessages)
    .option(
      '--group-by <keys>',
      `comma-separated grouping, outermost first: ${Object.keys(GROUP_KEY_FLAGS).join(', ')}`,
      groupBy,
      [...DEFAULT_GROUP_BY],
    )
    .addHelpText('after', READ_NOTE)
    .action(async (flags: CommonFlags & FilterFlags & { max: number; groupBy: GroupKey[] }) => {
      await runner.withSqs(flags, flags.dlqUrl, async (sqs) => {
        const status = statusLine(io, io.stderr.isTTY === true && !flags.json);
        const filter = filterOf(flags);
        const read = await readDeadLetters({
          ...readOptions(sqs, flags, io),
          onProgress: (n) => status.update(`read ${n} messages…`),
        });
        status.clear();
        const matching = read.messages.filter(compileFilter(filter));
        const summary = summarizeDeadLetters(matching, { groupBy: flags.groupBy });
        if (flags.json) out(`${JSON.stringify(listJson(read, summary, describeFilter(filter)), null, 2)}\n`);
        else out(renderList(read, summary, { filter: describeFilter(filter), max: flags.max }));
        if (read.stoppedBy === 'aborted') return CLI_EXIT.interrupted;
        return read.release.failed.length > 0 ? CLI_EXIT.problems : CLI_EXIT.ok;
      });
    });

  addCommon(
    dlq
      .command('show')
      .description(
        'Show the evidence (error, stack, attempts, times, handler version) and the body of one dead-lettered job. ' +
          'Nothing is deleted.',
      ),
  )
    .addOption(
      new Option('--message-id <id>', 'the DLQ message id, or the SourceMessageId it had on the source queue')
        .argParser(nonEmpty)
        .conflicts('jobId'),
    )
    .addOption(
      new Option(
        '--job-id <id>',
        'the job id (envelope id); every DLQ message of that job is shown',
      ).argParser(nonEmpty),
    )
    .option(
      '--max <n>',
      'read at most this many messages while looking',
      integer(1),
      DLQ_READER_DEFAULTS.maxMessages,
    )
    .option(
      '--idempotency-table <name>',
      'the idempotency table the printed "follow its chain" command reads (stack output IdempotencyTableName); repeatable (default: on an emulator, its tables named *idempotency*)',
      collect,
    )
    .option(
      '--dynamodb-endpoint <url>',
      'DynamoDB endpoint for that command when it is not --endpoint (default: AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL)',
    )
    .addHelpText('after', READ_NOTE)
    .action(
      async (flags: CommonFlags & FollowFlags & { messageId?: string; jobId?: string; max: number }) => {
        if (flags.messageId === undefined && flags.jobId === undefined) {
          runner.refuse('show needs --message-id or --job-id (add --help for usage)');
          return;
        }
        await runner.withSqs(flags, flags.dlqUrl, async (sqs, input) => {
          const read = await readDeadLetters(readOptions(sqs, flags, io));
          const found = read.messages.filter((m) =>
            flags.messageId !== undefined
              ? m.messageId === flags.messageId || m.evidence.sourceMessageId === flags.messageId
              : m.job?.id === flags.jobId,
          );
          if (flags.json) {
            out(
              `${JSON.stringify({ queue: read.queue, found: found.map(messageJson), notRead: read.notRead }, null, 2)}\n`,
            );
          } else if (found.length === 0) {
            const what = flags.messageId !== undefined ? `message ${flags.messageId}` : `job ${flags.jobId}`;
            out(`${what} not found among ${read.messages.length} messages read from ${read.queue.name}\n`);
            if (read.notRead > 0) {
              out(
                `note: about ${read.notRead} messages could not be read${read.queue.fifo ? ' (FIFO: behind the first of their group)' : ''}\n`,
              );
            }
          } else if (found.some((m) => m.job?.type !== undefined && m.job.source !== undefined)) {
            const follow = await followFor(flags, input, io);
            out(found.map((m) => renderMessage(m, follow.command)).join('\n'));
            for (const note of follow.notes) out(`${note}\n`);
          } else {
            out(found.map((m) => renderMessage(m)).join('\n'));
          }
          if (read.stoppedBy === 'aborted') return CLI_EXIT.interrupted;
          return found.length === 0 || read.release.failed.length > 0 ? CLI_EXIT.problems : CLI_EXIT.ok;
        });
      },
    );

  requiredOption(
    addFilters(
      addCommon(
        dlq
          .command('redrive')
          .description(
            'Move selected DLQ messages, bodies unchanged, to the target queue (FIFO: same message group, fresh ' +
              'deduplication id, DLQ order per group); each is deleted from the DLQ only after its send succeeded. ' +
              'Messages not selected are made visible again. Without --dry-run it asks for confirmation ' +
              '(or needs --yes when stdin is not a terminal). On AWS a plain full redrive can also be done with ' +
              'StartMessageMoveTask (console "Start DLQ redrive"); this command does filtered redrives and works on emulators.',
          ),
      ),
      'redrive',
    ),
    '--target-url <url>',
    'URL of the queue to send the jobs to (normally the source queue, stack output *QueueUrl)',
  )
    .option('--max <n>', 'move at most this many messages', integer(1))
    .option('--dry-run', 'list exactly what would move; send and delete nothing', false)
    .option('--yes', 'do not ask for confirmation (needed when stdin is not a terminal)', false)
    .option(
      '--any-source-queue',
      "also move from a queue that is no queue's dead-letter queue (refused otherwise: a main queue passed as --dlq-url by mistake would have its live jobs moved)",
      false,
    )
    .option(
      '--verify-seconds <n>',
      'after moving, wait this long, then report which redriven jobs came back to the DLQ',
      integer(1, 3_600),
    )
    .addHelpText(
      'after',
      `${READ_NOTE}

Selection: a message is selected when it matches every filter given (any pattern of a repeated
flag). On a FIFO DLQ a message group moves in DLQ order and stops at its first message that is not
selected or fails to send: its later messages stay in the DLQ (skipped as group-blocked).

--dlq-url must be some queue's dead-letter queue (the target's redrive policy names it, or
ListDeadLetterSourceQueues / the queues' redrive policies do): a main queue given by mistake is
refused (exit 2); --any-source-queue moves from it anyway.
FIFO, onDeadLetter 'park': a job of a moved group that was dead-lettered as GroupParked after the
redrive read its group (sent while the redrive ran) stays in the DLQ once its blocker completes.
--verify-seconds moves such jobs when the filter selects them (not after --max), and names every
GroupParked job still first of a moved group, with the command that moves it.
Exit code 1 when a message the filter selects stays behind an earlier message of its FIFO group
("not moved: ..."), when a redriven job came back (during the redrive, or at --verify-seconds), when
--verify-seconds could not look for one: on a FIFO DLQ a job that comes back goes behind the rest
of its group, which a read cannot get past ("not verified"), or when it leaves GroupParked jobs first
of a moved group.`,
    )
    .action(
      async (
        flags: CommonFlags &
          FilterFlags & {
            targetUrl: string;
            max?: number;
            dryRun: boolean;
            yes: boolean;
            verifySeconds?: number;
            anySourceQueue: boolean;
          },
      ) => {
        if (!flags.dryRun && !flags.yes && !io.stdinIsTTY) {
          runner.refuse(
            'refusing to redrive without confirmation: stdin is not a terminal. ' +
              'Run with --dry-run to see what would move, then again with --yes.',
          );
          return;
        }
        await runner.withSqs(flags, flags.dlqUrl, async (sqs) => {
          const status = statusLine(io, io.stderr.isTTY === true && !flags.json);
          const confirm =
            flags.dryRun || flags.yes
              ? undefined
              : async (plan: RedrivePlan) => {
                  err(
                    `redrive ${plan.filter}${plan.max === undefined ? '' : ` (at most ${plan.max})`}\n` +
                      `  from ${plan.dlq.name} (about ${plan.dlq.approximateVisible} messages)\n  to   ${plan.target.name}\n`,
                  );
                  for (const warning of plan.warnings) err(`warning: ${warning}\n`);
                  if (io.ask === undefined) return false;
                  const answer = await io.ask('Move them? (run with --dry-run first to see the list) [y/N] ');
                  return /^y(es)?$/i.test(answer.trim());
                };
          const onProgress = (p: RedriveProgress) =>
            status.update(
              `read ${p.read}, selected ${p.selected}, moved ${p.moved}, failed ${p.failed}, skipped ${p.skipped}…`,
            );
          const result = await redriveDeadLetters({
            sqs,
            dlqUrl: flags.dlqUrl,
            targetUrl: flags.targetUrl,
            filter: filterOf(flags),
            dryRun: flags.dryRun,
            anySourceQueue: flags.anySourceQueue,
            holdSeconds: flags.holdSeconds,
            waitTimeSeconds: flags.waitSeconds,
            onProgress,
            ...(io.nowMs ? { now: io.nowMs } : {}),
            ...(flags.max === undefined ? {} : { max: flags.max }),
            ...(confirm === undefined ? {} : { confirm }),
            ...(io.signal ? { signal: io.signal } : {}),
          });
          status.clear();
          if (!flags.json) out(renderRedrive(result));
          const redriven = [...result.moved, ...result.notDeleted];
          let verify: Awaited<ReturnType<typeof verifyRedrive>> | undefined;
          if (
            flags.verifySeconds !== undefined &&
            !result.dryRun &&
            redriven.length > 0 &&
            result.stoppedBy !== 'aborted' &&
            !io.signal?.aborted
          ) {
            err(`waiting ${flags.verifySeconds} s for the redriven jobs to run before checking the DLQ…\n`);
            await sleep(flags.verifySeconds * 1000, io.signal);
            if (!io.signal?.aborted) {
              verify = await verifyRedrive({
                sqs,
                dlqUrl: flags.dlqUrl,
                targetUrl: flags.targetUrl,
                redriven,
                exclude: result.seenMessageIds,
                // Parked jobs of the moved groups that were dead-lettered after this read are moved
                // too when this filter selects them, unless --max bounded the run.
                ...(result.stoppedBy === 'end' ? { moveStrandedParked: filterOf(flags) } : {}),
                holdSeconds: flags.holdSeconds,
                waitTimeSeconds: flags.waitSeconds,
                ...(io.nowMs ? { now: io.nowMs } : {}),
                ...(io.signal ? { signal: io.signal } : {}),
              });
              if (!flags.json) out(renderVerify(verify, flags.verifySeconds));
            }
          } else if (!flags.json && !result.dryRun && result.plan.dlq.fifo && result.moved.length > 0) {
            out(renderUnverifiedParks(result));
          }
          if (flags.json) out(`${JSON.stringify(redriveJson(result, verify), null, 2)}\n`);
          if (result.stoppedBy === 'aborted' || io.signal?.aborted) return CLI_EXIT.interrupted;
          const problems =
            result.stoppedBy === 'declined' ||
            result.failed.length > 0 ||
            result.notDeleted.length > 0 ||
            result.release.failed.length > 0 ||
            // A redriven job back in the DLQ during the redrive (skipped as came-back) or at the
            // verification, or a verification that could not look (FIFO group behind another message).
            result.skipped.some((item) => item.why === 'came-back') ||
            // FIFO: a message the filter selects, left behind an earlier message of its group.
            result.skipped.some((item) => item.why === 'group-blocked' && item.matchesFilter === true) ||
            (verify !== undefined &&
              (verify.cameBack.length > 0 ||
                verify.unverified.length > 0 ||
                verify.strandedParked.left.length > 0 ||
                verify.strandedParked.failed.length > 0));
          return problems ? CLI_EXIT.problems : CLI_EXIT.ok;
        });
      },
    );

  return dlq;
}
