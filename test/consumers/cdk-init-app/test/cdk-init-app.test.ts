/** The generated jest test, pointed at the stack with its JobQueue. */

import { Template } from 'aws-cdk-lib/assertions';
import * as cdk from 'aws-cdk-lib/core';
import { CdkInitAppStack } from '../lib/cdk-init-app-stack';

test('the stack has the greetings queue, its dead-letter queue and its worker', () => {
  const app = new cdk.App();
  const stack = new CdkInitAppStack(app, 'MyTestStack');
  const template = Template.fromStack(stack);
  template.resourceCountIs('AWS::SQS::Queue', 2);
  template.hasResourceProperties('AWS::Lambda::Function', { Runtime: 'nodejs24.x' });
});
