/**
 * `npm start`'s command line read into what the run needs: the preset (`--soak` picks the
 * soak's defaults), the flags, the fault rates they mean, and which flags the user gave; or the
 * exit code when there is nothing to run (--help: 0; a refused flag or combination: 2).
 */
import type { FaultRates } from '../../sample/external-service.ts';
import { type Preset, SOAK_PRESET, START_PRESET } from '../../sample/presets.ts';
import { checkCombinations, checkFaultRates, faultRates } from './checks.ts';
import type { StartFlags } from './flags.ts';
import type { StartIo } from './io.ts';
import { buildProgram } from './program.ts';

/** A command line that asks for a run. */
export interface StartRequest {
  readonly preset: Preset;
  readonly flags: StartFlags;
  /** The fake external API's fault rates (see ./checks.ts). */
  readonly faults: FaultRates;
  /** Whether the flag (camelCase name) was on the command line, not a default. */
  readonly given: (flag: string) => boolean;
}

/**
 * Parses `argv` (the user's arguments, without `node` and the script); help and refusals are
 * written to `io`.
 * @returns the request, or the exit code: 0 after --help, 2 after a refusal.
 */
export function parseStartArgs(argv: readonly string[], io: StartIo): StartRequest | number {
  // The preset decides the defaults, so it is read before the flags are parsed.
  const preset = argv.includes('--soak') ? SOAK_PRESET : START_PRESET;
  const program = buildProgram(preset, io);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    const code = (err as { exitCode?: number }).exitCode;
    return code === 0 ? 0 : 2;
  }
  const flags = program.opts<StartFlags>();
  const given = (flag: string) => program.getOptionValueSource(flag) === 'cli';
  try {
    const faults = faultRates(flags);
    checkFaultRates(flags, faults);
    checkCombinations(flags, given('users'), given);
    return { preset, flags, faults, given };
  } catch (err) {
    io.stderr.write(`error: ${(err as Error).message}\n`);
    return 2;
  }
}
