/** Worker of the standard `payments` queue: captures payments through the payment API; expires short reservation holds (jobs sent with DelaySeconds). */
import { createWorker } from 'sqs-jobs';
import { sampleJobs } from '../lib/sample/jobs.ts';
import { nightlyInvoiceJobs } from '../lib/sample/nightly-invoices.ts';

export const handler = createWorker({
  jobs: [sampleJobs.capturePayment, sampleJobs.expirePaymentHold, nightlyInvoiceJobs.nightlySummary],
});
