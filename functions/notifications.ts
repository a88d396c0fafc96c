/** Worker of the standard `notifications` queue: sends emails through the mail API. */
import { createWorker } from '../lib/runtime/worker.ts';
import { sampleJobs } from '../lib/sample/jobs.ts';

export const handler = createWorker({ jobs: [sampleJobs.sendEmail] });
