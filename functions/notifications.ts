/** Worker of the standard `notifications` queue: sends emails through the mail API. */
import { createWorker } from 'sqs-jobs';
import { sampleJobs } from '../lib/sample/jobs.ts';
import { soakBatchJobs } from '../lib/sample/soak-batches.ts';

export const handler = createWorker({
  jobs: [
    sampleJobs.sendEmail,
    // The soak's batches (npm run soak -- --batches N): lib/sample/soak-batches.ts.
    soakBatchJobs.start,
    soakBatchJobs.child,
    soakBatchJobs.summary,
  ],
});
