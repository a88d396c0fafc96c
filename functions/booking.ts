/**
 * Worker of the FIFO `booking` queue: reserve inventory → confirm reservation → issue invoice,
 * one `MessageGroupId` per user, the nightly invoice run (a recurring job starting a batch of one
 * `billing.user-invoices` per user, in the user's group: lib/sample/nightly-invoices.ts) and
 * reservation hold expiry (jobs sent for later). Thin on purpose: the jobs live in lib/sample/.
 */
import { createWorker } from 'sqs-jobs';
import { sampleJobs } from '../lib/sample/jobs.ts';
import { nightlyInvoiceJobs } from '../lib/sample/nightly-invoices.ts';

export const handler = createWorker({
  jobs: [
    sampleJobs.reserveInventory,
    sampleJobs.confirmReservation,
    sampleJobs.issueInvoice,
    nightlyInvoiceJobs.issueNightlyInvoices,
    nightlyInvoiceJobs.userInvoices,
    sampleJobs.expireHold,
  ],
});
