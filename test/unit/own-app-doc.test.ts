/**
 * docs/own-app.md sections 2 and 3 are code a user copies: the job file, the worker entry and the
 * CDK app. Copied as they are (with the user's own domain module), they compile, and every queue a
 * job of section 2 enqueues to is an enqueue target of section 3's queue, or the enqueueing run
 * would be dead-lettered at run time, after its side effects.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { typeCheck } from '../factories/type-check.ts';

const doc = readFileSync(new URL('../../docs/own-app.md', import.meta.url), 'utf8');

/** The ```ts block whose first line is `// <file>` (the file the doc tells the user to write). */
function block(file: string): string {
  const match = doc.match(
    new RegExp(`\`\`\`ts\\n// ${file.replace('.', '\\.')}[^\\n]*\\n([\\s\\S]*?)\`\`\``),
  );
  if (!match?.[1]) throw new Error(`docs/own-app.md has no \`\`\`ts block starting with // ${file}`);
  return match[1];
}

/** What the doc's `../lib/domain.js` stands for: the user's own code, in the shapes the job uses. */
const DOMAIN = `
interface CallOptions { readonly signal: AbortSignal }
interface KeyedCallOptions extends CallOptions { readonly idempotencyKey: string }
export const orders = {
  async get(orderId: string, _options: CallOptions): Promise<{ readonly id: string } | undefined> {
    return { id: orderId };
  },
};
export const billing = {
  async create(order: { readonly id: string }, _options: KeyedCallOptions): Promise<{ id: string }> {
    return { id: \`invoice-\${order.id}\` };
  },
};
export const mailer = { async sendInvoice(_invoiceId: string, _options: KeyedCallOptions): Promise<void> {} };
`;

describe('docs/own-app.md, sections 2 and 3', () => {
  const jobs = block('jobs/invoices.ts');
  const worker = block('workers/billing.ts');
  const app = block('bin/billing.ts');

  it('compile as written, the relative imports with the extension the section names', () => {
    const flat = (source: string) =>
      source
        .replaceAll("'../jobs/invoices.js'", "'./invoices.js'")
        .replaceAll("'../lib/domain.js'", "'./domain.js'");
    const { status, output } = typeCheck(
      {
        'invoices.ts': flat(jobs),
        'billing-worker.ts': flat(worker),
        'billing-app.ts': flat(app),
        'domain.ts': DOMAIN,
      },
      'own-app-doc',
    );
    expect({ status, output }).toEqual({ status: 0, output: '' });
  }, 120_000);

  it('every job a job enqueues runs on a queue the stack makes an enqueue target, and the worker runs it', () => {
    const queueOf = new Map(
      [...jobs.matchAll(/export const (\w+) = defineJob\(\{[\s\S]*?queue: '([a-z0-9-]+)'/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    const enqueued = [...jobs.matchAll(/ctx\.enqueue\((\w+),/g)].map((m) => m[1] as string);
    expect(enqueued).toEqual(['sendInvoiceEmail']);
    for (const job of enqueued) {
      expect(app).toContain(`addEnqueueTarget('${queueOf.get(job)}',`);
      expect(worker).toMatch(new RegExp(`createWorker\\(\\{ jobs: \\[[^\\]]*\\b${job}\\b`));
      expect(app).toMatch(new RegExp(`jobs: \\[[^\\]]*\\b${job}\\b`));
    }
  });
});
