/**
 * `dlq show` on a dead letter without evidence attributes names both causes: SQS moved it after
 * `maxReceiveCount` receives, or the worker dead-lettered it with no room left for evidence beside
 * a body near SQS's 1 MiB limit; with such a body it names the worker as the likely one.
 */
import { describe, expect, it } from 'vitest';
import { SQS_MAX_MESSAGE_BYTES } from '../../lib/core/message-size.ts';
import { toDeadLetterMessage } from '../../lib/ops/dead-letter-message.ts';
import { renderMessage } from '../../lib/ops/format.ts';

const show = (body: string) =>
  renderMessage(toDeadLetterMessage({ MessageId: 'm-1', ReceiptHandle: 'r-1', Body: body }));

describe('dlq show without evidence attributes', () => {
  it('allows both causes and does not say "not the worker"', () => {
    const text = show(JSON.stringify({ id: 'j-1', type: 't', data: {} }));
    expect(text).toContain('SQS moved this message (receive count above maxReceiveCount');
    expect(text).toContain('or the worker dead-lettered it with no room left for them');
    expect(text).not.toContain('not the worker');
    expect(text).not.toContain('most likely the worker');
  });

  it('names the worker as the likely cause beside a body near the 1 MiB limit', () => {
    const body = JSON.stringify({
      id: 'j-1',
      type: 't',
      data: { blob: 'x'.repeat(SQS_MAX_MESSAGE_BYTES - 200) },
    });
    const text = show(body.slice(0, SQS_MAX_MESSAGE_BYTES - 100));
    expect(text).toMatch(/this body is 1,?04\d,?\d{3} bytes, near the 1048576-byte limit/);
    expect(text).toContain('most likely the worker (its log has a "job dead-lettered" line for this job)');
  });
});
