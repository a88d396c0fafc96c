/**
 * `npm run dlq`: an alias of `sqs-jobs dlq` (bin/sqs-jobs.ts), kept so that
 * `npm run dlq -- list --dlq-url ...` goes on working.
 */
process.argv.splice(2, 0, 'dlq');
await import('./sqs-jobs.ts');
