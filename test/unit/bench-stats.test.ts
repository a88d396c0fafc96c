/**
 * bench/stats.ts and the order of the CPU rows' sides (bench/cpu.ts): the summary math behind the
 * bench's medians and ratios, on hand-made figures (no bench runs).
 */
import { describe, expect, it } from 'vitest';
import { sideOrder } from '../../bench/cpu.ts';
import { SIDES } from '../../bench/sides.ts';
import { median, roundRatios, spread } from '../../bench/stats.ts';

describe('median and spread', () => {
  it('gives the middle figure of an odd count and the mean of the two middle ones of an even count, in any order', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('leaves the figures it is given in their order', () => {
    const figures = [3, 1, 2];
    median(figures);
    expect(figures).toEqual([3, 1, 2]);
  });

  it('is not a number for no figures, rather than a made-up 0', () => {
    expect(median([])).toBeNaN();
  });

  it('gives the smallest and the largest figure', () => {
    expect(spread([1.2, 0.8, 2.1])).toEqual([0.8, 2.1]);
  });
});

describe('roundRatios', () => {
  it("divides each round's figure by the other side's figure of the same round", () => {
    expect(roundRatios([20, 30, 12], [10, 20, 12])).toEqual([2, 1.5, 1]);
  });

  it('gives the same ratio in every round when a load slows both processes of a round alike; out of step, the busy rounds no longer cancel', () => {
    // The machine is twice as busy in the last two rounds; ours costs 1.5× theirs in every round.
    const theirs = [10, 10, 10, 20, 20];
    const ours = theirs.map((v) => v * 1.5);
    // Theirs out of step by a round: one busy round of theirs meets a quiet one of ours.
    const shifted = [10, 10, 20, 20, 20];
    expect(median(roundRatios(ours, theirs))).toBe(1.5);
    expect(spread(roundRatios(ours, theirs))).toEqual([1.5, 1.5]);
    expect(median(roundRatios(ours, shifted))).toBe(1.5);
    expect(spread(roundRatios(ours, shifted))).toEqual([0.75, 1.5]);
  });

  it('refuses figures of a different number of rounds, saying both sides need one per round', () => {
    expect(() => roundRatios([1, 2, 3], [1, 2])).toThrow(
      'roundRatios: 3 figures against 2; both sides need one per round',
    );
  });
});

describe('sideOrder (CPU rows)', () => {
  const rounds = [0, 1, 2, 3, 4, 5, 6];

  it('runs every side once per round', () => {
    for (const round of rounds) expect([...sideOrder(round)].sort()).toEqual([...SIDES].sort());
  });

  it('runs ours right next to both Powertools sides in every round, so each ratio with a target compares processes run back to back', () => {
    for (const round of rounds) {
      const order = sideOrder(round);
      const at = order.indexOf('ours');
      const neighbours = [order[at - 1], order[at + 1]].sort();
      expect(neighbours).toEqual(['powertools', 'powertools-same-outputs']);
    }
  });

  it('alternates which reference runs first and whether the floor opens or closes the round', () => {
    const firstReference = rounds.map((r) => sideOrder(r).find((s) => s.startsWith('powertools')));
    const floorFirst = rounds.map((r) => sideOrder(r)[0] === 'floor');
    expect(new Set(firstReference.slice(0, 4)).size).toBe(2);
    expect(floorFirst.slice(0, 4)).toEqual([true, false, true, false]);
    expect(rounds.map(sideOrder).slice(4)).toEqual(rounds.map(sideOrder).slice(0, 3));
  });
});
