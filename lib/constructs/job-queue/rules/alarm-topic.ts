/**
 * Alarm actions: without an alarm topic the alarms change state and notify nobody, so a
 * stuck queue or a full DLQ goes unnoticed. That is a warning (`sqs-jobs:noAlarmTopic`), not a
 * refusal: alarms can be wired elsewhere. `alarmTopic: false` says so and silences it, as does
 * `Annotations.of(scope).acknowledgeWarning('sqs-jobs:noAlarmTopic', reason)`.
 */
import { JOB_QUEUE_WARNINGS } from '../defaults.ts';
import { error, type JobQueueRule, warning } from './types.ts';

export const alarmTopicRule: JobQueueRule = ({ props }) => {
  const topic: unknown = props.alarmTopic;
  if (topic === false) return [];
  if (topic === undefined || topic === null) {
    return [
      warning(
        JOB_QUEUE_WARNINGS.noAlarmTopic,
        'alarmTopic: not set: the alarms of this queue notify nobody; pass an SNS topic (e.g. AlarmTopic .topic), or alarmTopic: false when they are watched another way',
      ),
    ];
  }
  const t = (typeof topic === 'object' ? topic : {}) as Partial<Record<string, unknown>>;
  if (typeof t.topicArn === 'string') return [];
  if (typeof (t.topic as { topicArn?: unknown } | undefined)?.topicArn === 'string') {
    return [error('alarmTopic: got an AlarmTopic construct: pass its .topic')];
  }
  return [error('alarmTopic: must be an SNS topic or false')];
};
