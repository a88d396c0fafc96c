/**
 * `sqs-jobs send`: sends one job to a queue, from a ready envelope (`--envelope <json|->`) or from
 * `--type` and `--data`, through `JobClient.sendEnvelope` (lib/client): the envelope rules
 * (`parseEnvelope` = envelope.schema.json) and the producer rules of the queue (partition key as
 * `MessageGroupId`, required on FIFO, a fair queue's tenant on standard; delay, size, body characters) are checked before anything is sent. The body
 * goes out exactly as given: `--data` is placed into the envelope as written, so numbers keep their
 * spelling and precision.
 *
 * Exit codes: 0 sent (or checked, with `--dry-run`); 1 not sent because SQS kept failing on its side
 * (after the retries: try again); 2 refused (bad input or flags, FIFO without partition key, invalid
 * envelope, missing queue, unreachable endpoint, credentials, SQS refused the message).
 */
import { statSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { JobClient } from '../client/job-client.ts';
import { JobClientError } from '../client/job-client-error.ts';
import { createEnvelope, EnvelopeError } from '../core/envelope.ts';
import type { LogWriter } from '../core/logger.ts';
import { MAX_DELAY_SECONDS } from '../core/message-parameters.ts';
import { translateSqsError } from '../ops/errors.ts';
import type { OpsSqs } from '../ops/queue.ts';
import { validateQueueUrl } from '../ops/queue.ts';
import {
  addConnectionOptions,
  type CommandRunner,
  type ConnectionFlags,
  integer,
  requiredOption,
} from './common.ts';
import { CLI_EXIT, type CliIo, StdinError } from './io.ts';

/** Envelope `source` of jobs built from `--type` without `--source`. */
export const DEFAULT_CLI_SOURCE = '/sqs-jobs/cli';

interface SendFlags extends ConnectionFlags {
  readonly queueUrl: string;
  readonly envelope?: string;
  readonly type?: string;
  readonly data?: string;
  readonly source?: string;
  readonly partitionKey?: string;
  readonly id?: string;
  readonly delaySeconds?: number;
  readonly dryRun: boolean;
}

/** The flag that sets each envelope field, for problems phrased in envelope terms. */
const FLAG_OF_FIELD: Record<string, string> = {
  type: '--type',
  source: '--source',
  id: '--id',
  partitionkey: '--partition-key',
  data: '--data',
  delaySeconds: '--delay-seconds',
};

/** Says a problem in the words of the flags the user typed (`partitionkey` → `--partition-key`). */
function inFlagTerms(problem: string, fromType: boolean): string {
  const text = problem.replace(/^invalid job envelope: /, fromType ? '' : '--envelope: ');
  const field = /^(\w+) /.exec(text)?.[1];
  if (field === undefined) return text;
  // A ready envelope names its own fields; only the delay is a flag there.
  if (!fromType && field !== 'delaySeconds') return text;
  const flag = FLAG_OF_FIELD[field];
  return flag === undefined ? text : `${flag}${text.slice(field.length)}`;
}

/** The path a value names when it is not JSON but an existing file (`job.json`, curl's `@job.json`). */
function fileNamed(value: string): string | undefined {
  for (const path of [value, value.startsWith('@') ? value.slice(1) : undefined]) {
    if (path === undefined || path === '') continue;
    try {
      if (statSync(path).isFile()) return path;
    } catch {
      // not a file: the value is meant as JSON
    }
  }
  return undefined;
}

/** Reads `--envelope` / `--data`: the value itself, or stdin for `-`. */
async function readValue(flag: string, value: string, io: CliIo): Promise<string> {
  if (value !== '-') {
    const text = value.trim();
    try {
      JSON.parse(text);
    } catch (error) {
      const file = fileNamed(text);
      if (file !== undefined) {
        const shellPath = /^[\w./@:+-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`;
        throw new InputError(
          `${flag} is not JSON (${(error as Error).message}) but names a file: ${flag} takes the JSON itself; to read a file, use ${flag} - < ${shellPath}`,
        );
      }
    }
    return text;
  }
  if (io.readStdin === undefined) throw new InputError(`${flag} -: stdin cannot be read here`);
  let text: string;
  try {
    text = (await io.readStdin()).trim();
  } catch (error) {
    if (error instanceof StdinError) throw new InputError(`${flag} -: ${error.message}`);
    throw error;
  }
  if (text === '')
    throw new InputError(`${flag} -: stdin was empty; pipe the JSON in, e.g. ${flag} - < job.json`);
  return text;
}

/** Bad input: one line, exit code 2. */
class InputError extends Error {
  override readonly name = 'InputError';
}

/**
 * The envelope text of `--type`/`--data`: the attributes built and checked by `createEnvelope`,
 * then the data text exactly as given (no JSON round trip, so `1.50` and `1.0e3` stay as written;
 * a number JavaScript cannot read as written, such as `1e400`, is refused by the client).
 */
function envelopeFromFlags(flags: SendFlags, dataText: string): string {
  try {
    JSON.parse(dataText);
  } catch (error) {
    throw new InputError(
      `--data is not JSON (${(error as Error).message}); quote it for the shell, e.g. --data '{"bookingId":"b-42"}'`,
    );
  }
  let attributes: Record<string, unknown>;
  try {
    const { data: _, ...rest } = createEnvelope({
      type: flags.type ?? '',
      source: flags.source ?? DEFAULT_CLI_SOURCE,
      data: null,
      ...(flags.id === undefined ? {} : { id: flags.id }),
      ...(flags.partitionKey === undefined ? {} : { partitionKey: flags.partitionKey }),
    });
    attributes = rest;
  } catch (error) {
    if (error instanceof EnvelopeError) throw new InputError(inFlagTerms(error.message, true));
    throw error;
  }
  return `${JSON.stringify(attributes).slice(0, -1)},"data":${dataText}}`;
}

/** Warnings of the JobClient (large payload, retries) as `warning:` lines on stderr. */
function stderrLogger(io: CliIo): LogWriter {
  const line = (level: string, message: string, extra?: Record<string, unknown>) =>
    io.stderr.write(`${level}: ${message}${extra === undefined ? '' : ` ${JSON.stringify(extra)}`}\n`);
  return {
    debug() {},
    info() {},
    warn: (message, extra) => line('warning', message, extra),
    error: (message, extra) => line('error', message, extra),
  };
}

const HELP_AFTER = `
The job envelope is a CloudEvents 1.0 event (lib/core/envelope.schema.json): specversion "1.0",
id, source, type, time (RFC 3339), datacontenttype "application/json", data, and partitionkey
(sent as the MessageGroupId: the order key on a FIFO queue, a fair queue's tenant on a standard
queue). Before sending, the envelope rules and the queue's rules are
checked: a FIFO queue (URL ending in .fifo) needs a partition key of 1-128 printable ASCII
characters without space; the message must fit 1 MiB; --delay-seconds only on standard queues.
On a FIFO queue the MessageDeduplicationId is derived from source, id, type and data: sending the
same job again within 5 minutes is deduplicated by SQS; another job under the same id is not.

Examples:
  npx sqs-jobs send --queue-url $QUEUE --type payments.capture --data '{"bookingId":"b-42"}'
  npx sqs-jobs send --queue-url $BOOKING_FIFO --type booking.reserve-inventory --data '{"bookingId":"b-42"}' --partition-key user-7
  npx sqs-jobs send --queue-url $QUEUE --envelope - < job.json
  npx sqs-jobs send --queue-url $QUEUE --envelope "$(cat job.json)" --dry-run --json

Exit codes: 0 sent (or checked with --dry-run), 1 not sent (SQS kept failing; try again),
2 refused (bad input, invalid envelope, FIFO without partition key, queue, endpoint, credentials).
See docs/operations.md.`;

/** Adds `send` to `program`. */
export function addSendCommand(program: Command, runner: CommandRunner): Command {
  const { io, out } = runner;
  const fromTypeOnly = ['type', 'data', 'source', 'partitionKey', 'id'];

  return addConnectionOptions(
    requiredOption(
      program.command('send'),
      '--queue-url <url>',
      'the queue to send to (stack output *QueueUrl)',
    )
      .description(
        'Send one job: a ready CloudEvents job envelope (--envelope), or one built from --type and --data. ' +
          'Checked against the envelope rules and the queue (FIFO partition key, size) before sending; ' +
          'prints the MessageId (and SequenceNumber on FIFO).',
      )
      .addOption(
        new Option(
          '--envelope <json>',
          'the whole job envelope as JSON, sent exactly as given; - reads stdin',
        ).conflicts(fromTypeOnly),
      )
      .option('--type <type>', 'job type of a new envelope, e.g. payments.capture (with --data)')
      .option(
        '--data <json>',
        "the job's data as JSON (ids only), placed in the envelope as written; - reads stdin",
      )
      .option('--source <uri>', `envelope source of a new envelope (default: ${DEFAULT_CLI_SOURCE})`)
      .option(
        '--partition-key <key>',
        'partitionkey of a new envelope, sent as the MessageGroupId: on a FIFO queue the order key (required there), on a standard queue the tenant of a fair queue; e.g. the user id',
      )
      .option('--id <id>', 'id of a new envelope (default: a random UUID); with source, the job identity')
      .option(
        '--delay-seconds <n>',
        'seconds before the job becomes visible (standard queues only)',
        integer(0, MAX_DELAY_SECONDS),
      )
      .option('--dry-run', 'check and print what would be sent; send nothing', false),
  )
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: SendFlags) => {
      if (flags.data !== undefined && flags.type === undefined) {
        runner.refuse('--data needs --type <type> (or give the whole envelope with --envelope)');
        return;
      }
      if (flags.envelope === undefined && flags.type === undefined) {
        runner.refuse(
          'send needs --envelope <json|-> or --type <type> with --data <json|-> (add --help for usage)',
        );
        return;
      }
      if (flags.type !== undefined && flags.data === undefined) {
        runner.refuse(`--type needs --data <json|->: the job's data, e.g. --data '{"bookingId":"b-42"}'`);
        return;
      }
      await runner.withSqs(flags, flags.queueUrl, async (sqs) => {
        const queue = validateQueueUrl(flags.queueUrl, '--queue-url');
        const fromType = flags.envelope === undefined;
        try {
          const body = fromType
            ? envelopeFromFlags(flags, await readValue('--data', flags.data ?? '', io))
            : await readValue('--envelope', flags.envelope ?? '', io);
          return await send(sqs, queue, body, fromType, flags);
        } catch (error) {
          if (!(error instanceof InputError)) throw error;
          runner.err(`error: ${error.message}\n`);
          return CLI_EXIT.cannotRun;
        }
      });
    });

  async function send(
    sqs: OpsSqs,
    queue: string,
    body: string,
    fromType: boolean,
    flags: SendFlags,
  ): Promise<number> {
    const client = new JobClient({
      source: flags.source ?? DEFAULT_CLI_SOURCE,
      queueUrls: { [queue]: flags.queueUrl },
      sqs,
      logger: stderrLogger(io),
    });
    const options = flags.delaySeconds === undefined ? {} : { delaySeconds: flags.delaySeconds };
    try {
      const checked = client.checkEnvelope(queue, body, options);
      const { id, type } = checked.envelope;
      if (checked.envelope.runat !== undefined || checked.envelope.schedulegeneration !== undefined) {
        // These attributes belong to a job whose state item JobClient wrote (docs/contracts.md):
        // without it the worker cannot tell the job's time, cancel or reschedule it.
        runner.err(
          `error: --envelope: runat and schedulegeneration are set by JobClient for a job sent for later (docs/contracts.md: producers do not write them by hand); remove them, and send a job for later with jobClient.send(job, data, { runAt }) or { delayMs }, or use --delay-seconds (up to 900) for a short delay\n`,
        );
        return CLI_EXIT.cannotRun;
      }
      if (flags.dryRun) {
        const facts = {
          dryRun: true,
          queueUrl: checked.queueUrl,
          id,
          type,
          ...(checked.messageGroupId === undefined ? {} : { messageGroupId: checked.messageGroupId }),
          ...(checked.messageDeduplicationId === undefined
            ? {}
            : { messageDeduplicationId: checked.messageDeduplicationId }),
          ...(checked.delaySeconds === undefined ? {} : { delaySeconds: checked.delaySeconds }),
          bytes: checked.bytes,
          body: checked.body,
        };
        if (flags.json) out(`${JSON.stringify(facts, null, 2)}\n`);
        else {
          const rows: Array<[string, string | number | undefined]> = [
            ['MessageGroupId', checked.messageGroupId],
            ['MessageDeduplicationId', checked.messageDeduplicationId],
            ['DelaySeconds', checked.delaySeconds],
            ['size', `${checked.bytes} bytes`],
            ['body', checked.body],
          ];
          out(
            `dry run: job ${id} (${type}) checked for ${queue}; nothing was sent\n` +
              rows
                .filter(([, value]) => value !== undefined)
                .map(([name, value]) => `  ${name.padEnd(22)}  ${value}\n`)
                .join(''),
          );
        }
        return CLI_EXIT.ok;
      }
      const sent = await client.sendEnvelope(queue, body, options);
      if (flags.json) {
        out(
          `${JSON.stringify(
            {
              queueUrl: flags.queueUrl,
              id: sent.id,
              type,
              messageId: sent.messageId,
              ...(sent.sequenceNumber === undefined ? {} : { sequenceNumber: sent.sequenceNumber }),
            },
            null,
            2,
          )}\n`,
        );
      } else {
        out(
          `sent job ${sent.id} (${type}) to ${queue}: MessageId ${sent.messageId}` +
            `${sent.sequenceNumber === undefined ? '' : `, SequenceNumber ${sent.sequenceNumber}`}\n`,
        );
      }
      return CLI_EXIT.ok;
    } catch (error) {
      if (!(error instanceof JobClientError)) throw error;
      if (error.code === 'InvalidEntries') {
        runner.err(`error: ${error.problems.map((p) => inFlagTerms(p.message, fromType)).join('; ')}\n`);
        return CLI_EXIT.cannotRun;
      }
      // Not sent: say it in the terms of the other commands (queue missing, endpoint, credentials).
      const detail = error.problems[0]?.message.replace(`${error.code}: `, '') ?? error.message;
      const translated = translateSqsError(
        error.cause ?? Object.assign(new Error(detail), { name: error.code, code: error.code }),
        'SendMessageBatch',
        flags.queueUrl,
      );
      if (translated.code !== 'SqsRequestFailed') {
        runner.err(`error: ${translated.message}\n`);
        return CLI_EXIT.cannotRun;
      }
      runner.err(
        `error: ${error.message}${error.senderFault ? '' : ' (SQS failed on its side after the retries: try again)'}\n`,
      );
      return error.senderFault ? CLI_EXIT.cannotRun : CLI_EXIT.problems;
    }
  }
}
