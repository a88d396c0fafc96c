/** Lambda entry point of the `greetings` queue's worker. */
import { createWorker } from 'sqs-jobs';
import { greet } from '../jobs/greet';

export const handler = createWorker({ jobs: [greet] });
