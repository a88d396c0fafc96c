/**
 * What the ops CLI prints from DLQ data stays on its line and cannot drive or reorder the
 * operator's terminal: control characters (C0, DEL, C1) and the bidi embedding, override and
 * isolate controls (U+202A–U+202E, U+2066–U+2069) in a job id, a job type, an `ErrorReason`, an
 * error message or a body are shown escaped, in `dlq list`, `dlq show`, redrive (dry run and
 * real) and verify output alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import type { DeadLetterRead } from '../../lib/ops/dlq-reader.ts';
import { renderList, renderMessage, renderRedrive, renderVerify } from '../../lib/ops/format.ts';
import type { MovedItem, RedriveResult, VerifyRedriveResult } from '../../lib/ops/redrive/index.ts';
import { summarizeDeadLetters } from '../../lib/ops/summary.ts';
import { terminalField } from '../../lib/ops/terminal-text.ts';

/** The characters of `line` no printed line may hold: C0, DEL, C1, bidi controls. */
const unsafeIn = (line: string): string[] =>
  [...line].filter((c) => {
    const code = c.codePointAt(0) as number;
    return (
      code < 0x20 ||
      (code >= 0x7f && code <= 0x9f) ||
      (code >= 0x202a && code <= 0x202e) ||
      (code >= 0x2066 && code <= 0x2069)
    );
  });

const QUEUE = { name: 'dlq', url: 'http://127.0.0.1:9324/000000000000/dlq', fifo: false };

interface Fields {
  readonly jobId: string;
  readonly jobType: string;
  readonly reason: string;
  readonly errorMessage: string;
  readonly data: string;
}

/** Every text output of the DLQ commands for one dead letter carrying `fields`. */
function outputs(fields: Fields): string[] {
  const message = toDeadLetterMessage({
    MessageId: 'm-1',
    ReceiptHandle: 'r-1',
    Body: JSON.stringify({
      specversion: '1.0',
      id: fields.jobId,
      source: '/sqs-jobs/t',
      type: fields.jobType,
      time: '2026-11-30T10:00:00.000Z',
      data: { note: fields.data },
    }),
    MessageAttributes: {
      ErrorReason: { DataType: 'String', StringValue: fields.reason },
      ErrorName: { DataType: 'String', StringValue: 'PermanentError' },
      ErrorMessage: { DataType: 'String', StringValue: fields.errorMessage },
    },
  });
  const read = {
    queue: { ...QUEUE, approximateVisible: 1, approximateNotVisible: 0 },
    messages: [message],
    stoppedBy: 'end',
    notRead: 0,
    release: { released: 1, failed: [] },
  } as unknown as DeadLetterRead;
  const item = {
    messageId: 'm-1',
    jobId: message.job?.id,
    jobType: message.jobType,
    reason: message.reason,
    errorName: message.errorName,
    messageGroupId: undefined,
    jobKey: message.jobKey,
  };
  const moved: MovedItem = { ...item, targetMessageId: 't-1', deduplicationId: undefined, sentAfterMs: 0 };
  const result = (dryRun: boolean): RedriveResult =>
    ({
      dryRun,
      plan: {
        dlq: read.queue,
        target: { ...read.queue, name: 'work', url: 'http://127.0.0.1:9324/000000000000/work' },
        filter: `job id ${fields.jobId}`,
        max: undefined,
        warnings: [],
      },
      selected: [item],
      moved: dryRun ? [] : [moved],
      failed: dryRun
        ? []
        : [{ ...item, code: fields.reason, message: fields.errorMessage, senderFault: true }],
      notDeleted: [],
      skipped: [{ ...item, why: 'came-back' }],
      read: 1,
      stoppedBy: 'end',
      notRead: 0,
      release: { released: 0, failed: [] },
      seenMessageIds: ['m-1'],
      startedAtMs: 0,
    }) as unknown as RedriveResult;
  const verify: VerifyRedriveResult = {
    redrivenJobs: 1,
    cameBack: [
      {
        redriven: moved,
        matchedBy: 'id',
        messageId: 'm-2',
        reason: fields.reason,
        errorName: 'PermanentError',
        errorMessage: fields.errorMessage,
        sentAt: undefined,
      } as unknown as VerifyRedriveResult['cameBack'][number],
    ],
    unverified: [{ redriven: moved, messageGroupId: fields.jobType, behindMessageId: 'm-0' }],
    read: 1,
    notRead: 0,
    targetPending: 0,
    strandedParked: { moved: [moved], failed: [], left: [item], command: undefined },
  };
  return [
    renderList(read, summarizeDeadLetters([message])),
    renderList(read, summarizeDeadLetters([message], { groupBy: ['reason', 'jobType'] })),
    renderMessage(message),
    renderRedrive(result(true)),
    renderRedrive(result(false)),
    renderVerify(verify, 5),
  ];
}

const PLAIN: Fields = { jobId: 'j-1', jobType: 'x.y', reason: 'HTTP 400', errorMessage: 'bad', data: 'd' };

/** Text with a fair share of the characters that must not reach the terminal raw. */
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\n', '\r', '\t', '\u001b', '\u0007', '\u0085', '\u009b', '\u007f', '\u0000'),
    fc.constantFrom('\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'),
    fc.constantFrom('a', 'é', '\u{1F600}', ' ', '[', '0'),
  ),
  minLength: 1,
  maxLength: 12,
});

describe('ops CLI output and hostile DLQ data', () => {
  it('prints no control or bidi character, and the data never adds a line (property)', () => {
    const plainLines = outputs(PLAIN).map((text) => text.split('\n').length);
    fc.assert(
      fc.property(
        fc.record({
          jobId: hostile,
          jobType: hostile,
          reason: hostile,
          errorMessage: hostile,
          data: hostile,
        }),
        (fields) => {
          const texts = outputs(fields);
          texts.forEach((text, i) => {
            for (const line of text.split('\n')) expect(unsafeIn(line)).toEqual([]);
            expect(text.split('\n').length).toBe(plainLines[i]);
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('shows an ErrorReason line feed and a right-to-left override escaped, where the operator reads them', () => {
    const [list, , show, dryRun, , verify] = outputs({
      ...PLAIN,
      jobId: 'invoice\u202eexe.pdf',
      reason: 'HTTP 400\ninjected line',
    });
    expect(list).toContain('HTTP 400\\u000ainjected line');
    expect(show).toContain('job id             invoice\\u202eexe.pdf');
    expect(dryRun).toContain('job invoice\\u202eexe.pdf');
    expect(verify).toContain('job invoice\\u202eexe.pdf');
    expect(terminalField('a\u2066b\u0085c')).toBe('a\\u2066b\\u0085c');
  });
});
