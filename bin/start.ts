/**
 * `npm start`: the deployed stack running locally on embedded emulators, a sample workload with
 * injected faults, and a report that checks nothing was lost, duplicated or reordered. `npm run
 * soak` (`--soak`): the same with the soak preset (10,000 jobs, every fault kind on). Flags, help,
 * the run and the exit codes (0 / 1 / 2 / 130) are in lib/cli/start/ (`runStartCli`); this file
 * only wires the process to it.
 *
 * The exit codes hold through `npm start` because the npm scripts `exec` node (package.json): npm
 * runs a script in `sh -c`, and a shell that stays in between (dash, Debian's `sh`) dies of the
 * terminal's SIGINT at once, so npm saw its child killed by SIGINT and exited 130 while this
 * process was still printing behind it. npm passes on the exit code of a child that exits. Node
 * runs with `--import tsx`, not the tsx CLI, whose own child process is SIGKILLed (exit 130) when
 * it does not acknowledge a relayed SIGINT within 30 ms. `npx tsx bin/start.ts` still goes
 * through `sh -c`.
 */
import { runStartCli } from '../lib/cli/start/index.ts';

process.exitCode = await runStartCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  onSignal(signal, listener) {
    process.on(signal, listener);
    return () => process.off(signal, listener);
  },
  exit: (code) => process.exit(code),
});
