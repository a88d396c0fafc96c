/** Rule group `alarms`: a warning when the alarms notify nobody, unless opted out. */
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { AlarmTopic } from '../../../lib/constructs/alarm-topic.ts';
import { alarmTopicRule } from '../../../lib/constructs/job-queue/rules/alarm-topic.ts';
import { errors, warnings } from './helpers.ts';

describe('alarms rule', () => {
  const topic = new AlarmTopic(new Stack(new App(), 'Rules'), 'Alarms');

  it('is silent with a topic, or with alarmTopic: false', () => {
    expect(warnings(alarmTopicRule, { alarmTopic: topic.topic })).toEqual([]);
    expect(errors(alarmTopicRule, { alarmTopic: topic.topic })).toEqual([]);
    expect(warnings(alarmTopicRule, { alarmTopic: false })).toEqual([]);
  });

  it('warns (does not refuse) when the topic is left out', () => {
    expect(errors(alarmTopicRule, { alarmTopic: undefined })).toEqual([]);
    expect(warnings(alarmTopicRule, { alarmTopic: undefined })).toEqual([
      'sqs-jobs:noAlarmTopic: alarmTopic: not set: the alarms of this queue notify nobody; pass an SNS topic (e.g. AlarmTopic .topic), or alarmTopic: false when they are watched another way',
    ]);
  });

  it('refuses the AlarmTopic construct itself and non-topics', () => {
    expect(errors(alarmTopicRule, { alarmTopic: topic })).toEqual([
      'alarmTopic: got an AlarmTopic construct: pass its .topic',
    ]);
    expect(errors(alarmTopicRule, { alarmTopic: 'arn:aws:sns:x' })).toEqual([
      'alarmTopic: must be an SNS topic or false',
    ]);
  });
});
