/** Worker of the standard `notifications` queue: sends emails through the mail API. */
import { createWorker } from 'sqs-jobs';
import { sampleJobs } from '../lib/sample/jobs.ts';

export const handler = createWorker({ jobs: [sampleJobs.sendEmail] });
