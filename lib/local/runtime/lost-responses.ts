/**
 * The lost-response fault of each mapped function (faults.ts `LostResponseFault`): its rate from
 * `lostResponseRate` (one number, or a map by function selector with `*` for the rest), its own
 * seeded generator, and the controls the running runtime offers (`loseNextResponses`,
 * `setLostResponseRate`).
 */

import { LostResponseFault, seededRandom } from '../faults.ts';
import type { FunctionDefinition } from '../function-config.ts';
import { type MappedFunctions, matchesFunction } from './functions.ts';
import type { LocalRuntimeOptions } from './options.ts';

/** One {@link LostResponseFault} per mapped function. */
export class LostResponses {
  private readonly faults = new Map<string, LostResponseFault>();

  /**
   * @param seed seed of the first function's generator; each next one gets its own.
   * @throws {LocalRuntimeError} when a key of a `lostResponseRate` map matches no mapped function.
   * @throws {RangeError} when a rate is outside [0, 1].
   */
  constructor(
    private readonly functions: MappedFunctions,
    rates: LocalRuntimeOptions['lostResponseRate'],
    seed: number,
  ) {
    const rateFor = (fn: FunctionDefinition): number => {
      if (rates === undefined || typeof rates === 'number') return rates ?? 0;
      const key = Object.keys(rates).find((k) => k !== '*' && matchesFunction(fn, k));
      return key !== undefined ? (rates[key] as number) : (rates['*'] ?? 0);
    };
    if (rates !== undefined && typeof rates === 'object') {
      for (const key of Object.keys(rates)) if (key !== '*') functions.find(key);
    }
    let index = 0;
    for (const fn of functions.all()) {
      this.faults.set(fn.logicalId, new LostResponseFault(rateFor(fn), seededRandom(seed + 7919 * index++)));
    }
  }

  /** The fault of a function by logical id. */
  of(logicalId: string): LostResponseFault | undefined {
    return this.faults.get(logicalId);
  }

  /** See `LocalRuntime.loseNextResponses`. @throws {LocalRuntimeError} when no function matches. */
  loseNext(functionSelector: string, count: number): void {
    (this.faults.get(this.functions.find(functionSelector).logicalId) as LostResponseFault).loseNext(count);
  }

  /** See `LocalRuntime.setLostResponseRate`. @throws {RangeError} outside [0, 1] */
  setRate(functionSelector: string, rate: number): void {
    const targets =
      functionSelector === '*'
        ? [...this.faults.values()]
        : [this.faults.get(this.functions.find(functionSelector).logicalId)];
    for (const f of targets) f?.setRate(rate);
  }
}
