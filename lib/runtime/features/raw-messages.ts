/**
 * The `rawMessages` feature of `sqs-jobs/worker`: bodies that are not envelopes, read as the
 * messages of the job with `defineJob({ raw })` (lib/runtime/raw-messages.ts). A worker with such a
 * job and without this feature is refused by `createWorker` (WorkerConfigError naming the import).
 */
import { identityAttributeOf } from '../raw-messages.ts';
import { rawEnvelopeOf } from '../record/raw.ts';
import { brandFeature, type RawMessagesFeature } from './feature.ts';

/**
 * Raw messages: `defineJob({ raw })`, a body that is not an envelope read as that job's message.
 * `import { rawMessages } from 'sqs-jobs/worker'`, then `features: [rawMessages]`. A raw job without
 * it makes createWorker throw a WorkerConfigError.
 */
export const rawMessages: RawMessagesFeature = /* @__PURE__ */ brandFeature<RawMessagesFeature>({
  name: 'rawMessages',
  rawEnvelopeOf,
  identityAttributeOf,
});
