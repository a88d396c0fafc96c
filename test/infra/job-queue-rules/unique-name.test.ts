/** Rule group `unique-name`: one JobQueue per logical name in a stack. */
import { describe, expect, it } from 'vitest';
import { uniqueNameFindings } from '../../../lib/constructs/job-queue/rules/unique-name.ts';

describe('unique-name rule', () => {
  const taken = new Map([['payments', 'Stack/Payments']]);

  it('accepts a name not taken yet', () => {
    expect(uniqueNameFindings('booking', taken)).toEqual([]);
    expect(uniqueNameFindings(undefined, taken)).toEqual([]);
  });

  it('refuses a name another JobQueue of the stack has, naming it', () => {
    expect(uniqueNameFindings('payments', taken)).toEqual([
      {
        level: 'error',
        message:
          "name: 'payments' is already the name of the JobQueue at Stack/Payments in this stack: their alarms, Queue metric dimension and dashboard widgets would mix; give each queue its own name",
      },
    ]);
  });
});
