/**
 * A producer's checks of a `sendBatch` entry beyond its job and data (`EntryChecks`, prepare.ts):
 * every key of the entry and of its options named (an unknown one refused with the key meant:
 * from plain JavaScript a misspelled `{ delay: 30 }` would otherwise send the job at once),
 * `options.parent`, and `runAt`/`delayMs` turned into the time the job is due (run-at.ts).
 * `JobClient` uses them (client-options.ts); a worker's sends, whose entries sqs-jobs builds
 * itself, do not, so none of this is in a worker's bundle (issue 21: bundle bytes).
 */

import { describeValue, isPlainObject, unknownKeyProblems } from './option-keys.ts';
import type { BatchEntry, EntryChecks, ParentLink, SendOptions } from './prepare.ts';
import { runAtMsOf } from './run-at.ts';

/** The keys of {@link SendOptions}. */
const SEND_OPTION_KEYS = [
  'partitionKey',
  'id',
  'delaySeconds',
  'correlationId',
  'traceparent',
  'tracestate',
  'parent',
  'awsTraceHeader',
  'runAt',
  'delayMs',
  'batchId',
] as const satisfies readonly (keyof SendOptions)[];

/** What to write instead of SQS parameter names and other clients' spellings. */
const SEND_OPTION_HINTS: Readonly<Record<string, string>> = {
  messagegroupid: 'partitionKey (it becomes the MessageGroupId)',
  groupid: 'partitionKey (it becomes the MessageGroupId)',
  messagededuplicationid: 'id (the MessageDeduplicationId is derived from the client source + id)',
  deduplicationid: 'id (the MessageDeduplicationId is derived from the client source + id)',
  delay: 'delaySeconds (up to 900 seconds) or delayMs (any length)',
  runat: 'runAt',
  eta: 'runAt',
  at: 'runAt',
};

/** The keys of {@link ParentLink}. */
const PARENT_LINK_KEYS = ['id', 'rootId', 'job'] as const satisfies readonly (keyof ParentLink)[];

/** What is wrong with `options.parent` beyond what the envelope check says (its shape). */
function parentLinkProblems(parent: unknown): string[] {
  if (!isPlainObject(parent)) {
    return [`options.parent must be an object { id, rootId, job? }, got ${describeValue(parent)}`];
  }
  const problems = unknownKeyProblems(parent, PARENT_LINK_KEYS, 'options.parent');
  if (parent.id === undefined) problems.push("options.parent.id is missing: the parent job's envelope id");
  if (parent.rootId === undefined) {
    problems.push(
      "options.parent.rootId is missing: the chain root's envelope id (the parent's own id for a root)",
    );
  }
  return problems;
}

/** The keys of {@link BatchEntry}. */
const BATCH_ENTRY_KEYS = ['job', 'data', 'options'] as const satisfies readonly (keyof BatchEntry)[];

const BATCH_ENTRY_HINTS: Readonly<Record<string, string>> = Object.fromEntries(
  SEND_OPTION_KEYS.map((key) => [key.toLowerCase(), `options: { ${key} }`]),
);

/** The producer's {@link EntryChecks}: what `JobClient.send`, `sendBatch` and `checkBatch` refuse. */
export const producerEntryChecks: EntryChecks = {
  shape(entry) {
    const problems: string[] = [
      ...unknownKeyProblems(
        entry,
        BATCH_ENTRY_KEYS,
        'entry',
        BATCH_ENTRY_HINTS,
        'a key of a sendBatch entry',
      ),
    ];
    const given: unknown = entry.options ?? {};
    if (!isPlainObject(given)) {
      problems.push(
        `options must be an object { partitionKey, id, delaySeconds }, got ${describeValue(given)}${typeof given === 'string' ? ' (a partition key goes in { partitionKey })' : ''}`,
      );
    } else {
      problems.push(...unknownKeyProblems(given, SEND_OPTION_KEYS, 'options', SEND_OPTION_HINTS));
      if (given.parent !== undefined) problems.push(...parentLinkProblems(given.parent));
    }
    return { options: isPlainObject(given) ? given : {}, problems };
  },
  due(options, problems) {
    const due = runAtMsOf(options, Date.now());
    if (due !== undefined && 'problem' in due) problems.push(due.problem);
    if (due !== undefined && options.delaySeconds !== undefined) {
      problems.push(
        'options.delaySeconds cannot go with runAt or delayMs: give runAt (a time) or delayMs (any delay) alone',
      );
    }
    return due !== undefined && 'runAtMs' in due ? due.runAtMs : undefined;
  },
};
