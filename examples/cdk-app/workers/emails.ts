/** Lambda entry point of the `emails` queue's worker. */
import { createWorker } from 'sqs-jobs';
import { sendReceipt } from '../jobs/emails.ts';

export const handler = createWorker({ jobs: [sendReceipt] });
