/** `greetings.greet`: the job of the cdk-init-app overlay (a job is business logic only). */
import { defineJob } from 'sqs-jobs';
import { z } from 'zod';

export const greet = defineJob({
  type: 'greetings.greet',
  queue: 'greetings',
  schema: z.object({ name: z.string().min(1) }),
  retry: { maxAttempts: 3, baseDelaySeconds: 1, maxDelaySeconds: 10 },
  timeoutSeconds: 10,
  async run({ name }, ctx) {
    ctx.logger.info('greeted', { name });
    return { jobId: ctx.jobId, greeting: `hello ${name}` };
  },
});
