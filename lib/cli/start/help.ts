/**
 * The text after the flags in `npm start -- --help` and `npm run soak -- --help`: examples, what
 * keep-running leaves where, the environment variables read and the exit codes.
 */
import { ENDPOINT_ENV } from '../../local/emulators.ts';
import { DEBUG_ENV } from './io.ts';

/** The soak's help text after the flags. */
const SOAK_HELP = `
Examples:
  npm run soak                                 10,000 jobs (500 users x 4 bookings x 5 jobs), every fault kind on
  npm run soak -- --jobs 1000                  a 1,000-job soak (users scaled)
  npm run soak -- --jobs 1000 --endpoint http://localhost:5000   on moto server

Environment:
  ${ENDPOINT_ENV.shared}, ${ENDPOINT_ENV.sqs}, ${ENDPOINT_ENV.dynamodb}   endpoints (see --endpoint)
  SQS_JOBS_FUNCTION_LOGS=1   print the Lambda functions' logs on stderr
  ${DEBUG_ENV}=1            print the stack trace of an error that stops the run

Exit code: 0 all invariants hold, 1 an invariant failed, 2 the run could not happen or did not
finish before --timeout-seconds. --keep-running, --console and --json work as with npm start
(npm start -- --help).`;

/** `npm start`'s help text after the flags. */
const START_HELP = `
Examples:
  npm start                                   default run: 100 users x 3 bookings, 5% API faults
  npm start -- --users 10 --fault-rate 0      small run without API faults
  npm start -- --fault-rate 0.2 --seed 7      more faults, another seed
  npm start -- --endpoint http://localhost:5000   against moto server (or env ${ENDPOINT_ENV.shared})
  npm run soak                                the soak: 10,000 jobs, every fault kind on (same flags)
  npm start -- --keep-running                 after the report, keep everything up until Ctrl-C: queue and DLQ URLs,
                                              commands to paste (sqs-jobs stats, dlq list, send)
  npm start -- --console                      the same, with the web console (open the printed URL during the run)
  npm start -- --no-workload --console        the sample stack and the console, no workload: send jobs yourself
  npm start -- --holds 40 --hold-delay-ms 5000   more reservation holds (jobs sent for later, half cancelled), longer
  npm run soak -- --jobs 1000 --batches 1000      with 1,000 small batches (completion jobs run once, none hanging)

Keep running: the report's DLQ read leaves every dead letter in its DLQ, visible (a FIFO DLQ is
read through by copying each message behind its group, then deleting the original: new MessageIds),
so sqs-jobs dlq list and the console see the run's dead letters. The printed send commands run jobs
of a demo booking (demo-user / demo-booking-1) that complete. Ctrl-C stops everything.

Environment:
  ${ENDPOINT_ENV.shared}, ${ENDPOINT_ENV.sqs}, ${ENDPOINT_ENV.dynamodb}   endpoints (see --endpoint)
  SQS_JOBS_FUNCTION_LOGS=1   print the Lambda functions' logs on stderr
  ${DEBUG_ENV}=1            print the stack trace of an error that stops the run

Exit code: 0 all invariants hold, 1 an invariant failed, 2 the run could not happen or did not
finish before --timeout-seconds, 130 Ctrl-C during the run (partial report, nothing kept running).
With --keep-running / --console: the report's code, after Ctrl-C has stopped everything;
--no-workload: 0.
--json with --keep-running / --console prints JSON Lines: the report, then where everything is
(the object of sqs-jobs local --json, plus externalApi and console); --no-workload: only the latter.`;

/** The help text after the flags: the soak's or `npm start`'s. */
export function helpAfter(soak: boolean): string {
  return soak ? SOAK_HELP : START_HELP;
}
