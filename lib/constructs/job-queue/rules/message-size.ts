/**
 * `MaximumMessageSize` of the queue and its DLQ: 1,024 bytes – 1 MiB (raised from 256 KiB in
 * August 2025; some tools still default to 256 KiB, so it is always set).
 * Source: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 */
import { LIMITS } from '../defaults.ts';
import { isKnownNumber } from '../values.ts';
import { error, type JobQueueRule } from './types.ts';

export const messageSizeRule: JobQueueRule = ({ settings: s }) => {
  if (isKnownNumber(s.maxMessageSizeBytes) && !Number.isInteger(s.maxMessageSizeBytes)) {
    return [
      error(
        `maxMessageSizeBytes: ${s.maxMessageSizeBytes} must be a whole number of bytes [quotas-messages]`,
      ),
    ];
  }
  if (
    isKnownNumber(s.maxMessageSizeBytes) &&
    (s.maxMessageSizeBytes < LIMITS.minMessageSizeBytes || s.maxMessageSizeBytes > LIMITS.maxMessageSizeBytes)
  ) {
    return [
      error(
        `maxMessageSizeBytes: ${s.maxMessageSizeBytes} is outside ${LIMITS.minMessageSizeBytes}–${LIMITS.maxMessageSizeBytes} bytes [quotas-messages]`,
      ),
    ];
  }
  return [];
};
