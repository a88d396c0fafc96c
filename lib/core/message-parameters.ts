/**
 * Rules of the per-message SendMessage parameters that both producers (lib/client) and the
 * worker (children, dead letters; lib/runtime) must obey. Source: SendMessage API reference
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
 */

/** Most seconds a message can be delayed (SendMessage API reference, DelaySeconds: 0 to 900). */
export const MAX_DELAY_SECONDS = 900;

/**
 * MessageGroupId rule (SendMessage API reference): 1–128 characters from a-z, A-Z, 0-9 and the
 * punctuation !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ — that is, printable ASCII without the space.
 */
const MESSAGE_GROUP_ID = /^[\x21-\x7e]{1,128}$/;

/** Whether `value` is a valid `MessageGroupId` (and `MessageDeduplicationId`: same rule). */
export function isValidMessageGroupId(value: string): boolean {
  return MESSAGE_GROUP_ID.test(value);
}
