/**
 * `AlarmTopic`: the SNS topic the job alarms notify, encrypted with its own KMS key, TLS-only,
 * with the grants CloudWatch needs to publish to it, and optional email subscriptions.
 *
 * Sources:
 * - CloudWatch cannot publish to a topic encrypted with the AWS-managed key `alias/aws/sns`;
 *   a customer-managed key must let `cloudwatch.amazonaws.com` use it:
 *   https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
 * - The key policy statement for CloudWatch alarms (`kms:Decrypt`, `kms:GenerateDataKey*`), and
 *   the condition keys that narrow it to the alarms of one account:
 *   https://repost.aws/knowledge-center/cloudwatch-configure-alarm-sns
 * - A topic policy replaces the default one, so it must allow CloudWatch to publish; scoped to this
 *   account's alarms against the confused-deputy problem:
 *   https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Notify_Users_Alarm_Changes.html
 * - Enforcing TLS: https://docs.aws.amazon.com/sns/latest/dg/sns-security-best-practices.html
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { JobsConfigError } from './errors.ts';

/** Properties of an {@link AlarmTopic}. */
export interface AlarmTopicProps {
  /**
   * Email addresses subscribed to the topic. Each address receives a confirmation email from
   * AWS Notifications and gets nothing until the link in it is followed.
   * @default - no subscriptions (subscribe later, see docs/deploy.md)
   */
  readonly emails?: readonly string[];

  /**
   * Display name of the topic (the sender name of the emails).
   * @default 'sqs-jobs alarms'
   */
  readonly displayName?: string;
}

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * An SNS topic for CloudWatch alarm notifications: encrypted at rest with a customer-managed KMS
 * key (rotated yearly) that CloudWatch may use on behalf of this account's alarms in this region
 * only, a topic policy that denies publishing without TLS and allows the same alarms to publish.
 * Both statements name the principal `cloudwatch.amazonaws.com` with the conditions
 * `aws:SourceAccount` = this account and `aws:SourceArn` like
 * `arn:<partition>:cloudwatch:<region>:<account>:alarm:*`, so no other account's alarm can make
 * CloudWatch use the key or the topic (the confused deputy).
 * @throws {JobsConfigError} when an email address is malformed.
 */
export class AlarmTopic extends Construct {
  /** The topic. */
  readonly topic: sns.Topic;
  /** The topic's encryption key. */
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    const emails = props.emails ?? [];
    const problems = emails
      .filter((e) => !EMAIL_PATTERN.test(e))
      .map((e) => `emails: '${e}' is not an email address`);
    if (problems.length > 0) throw new JobsConfigError('AlarmTopic', this.node.path, problems);

    const stack = Stack.of(this);
    // The alarms of this account and region, and nothing else CloudWatch does for anyone.
    const ownAlarmsOnly = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*`,
      },
    };
    this.key = new kms.Key(this, 'Key', {
      description: 'Encrypts the sqs-jobs alarm topic; CloudWatch may use it to publish alarms',
      enableKeyRotation: true,
      // Nothing is stored under this key (SNS does not keep messages): deleting it with the stack loses nothing.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToUseTheKey',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: ownAlarmsOnly,
      }),
    );

    this.topic = new sns.Topic(this, 'Topic', {
      displayName: props.displayName ?? 'sqs-jobs alarms',
      masterKey: this.key,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsOfThisAccount',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: ownAlarmsOnly,
      }),
    );

    for (const email of emails) this.topic.addSubscription(new subscriptions.EmailSubscription(email));
  }
}
