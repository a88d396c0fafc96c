/** Lambda entry point of the `orders` queue's worker: thin, it wires jobs into createWorker. */
import { createWorker } from 'sqs-jobs';
import { recordOrderStep } from '../jobs/orders.ts';

export const handler = createWorker({ jobs: [recordOrderStep] });
