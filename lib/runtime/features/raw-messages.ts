/**
 * The `rawMessages` feature of `sqs-jobs/worker`: bodies that are not envelopes, read as the
 * messages of the job with `defineJob({ raw })` (lib/runtime/raw-messages.ts). A worker with such a
 * job and without this feature is refused by `createWorker` (WorkerConfigError naming the import).
 */
import { identityAttributeOf } from '../raw-messages.ts';
import { rawEnvelopeOf } from '../record/raw.ts';
import { brandFeature, type RawMessagesFeature } from './feature.ts';

/** Raw messages: `import { rawMessages } from 'sqs-jobs/worker'`, then `features: [rawMessages]`. */
export const rawMessages: RawMessagesFeature = /* @__PURE__ */ brandFeature<RawMessagesFeature>({
  name: 'rawMessages',
  rawEnvelopeOf,
  identityAttributeOf,
});
