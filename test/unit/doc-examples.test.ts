/**
 * The `@example` of each main API (`defineJob`, `createWorker`, `JobClient`, `JobQueue`, the test kit) is code
 * that compiles: its ```ts blocks are written as files of a temporary project inside the repo
 * (importing the package by name, `sqs-jobs`, which tsconfig paths resolve to lib/) and checked
 * by the tsc binary (test/factories/type-check.ts). A failure names the example.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { typeCheck } from '../factories/type-check.ts';

const root = new URL('../../', import.meta.url).pathname;

/** Where each example lives: the file and the declaration its docstring documents. */
const DOCUMENTED = [
  { name: 'defineJob', file: 'lib/runtime/job.ts', declaration: 'export function defineJob' },
  { name: 'createWorker', file: 'lib/runtime/worker.ts', declaration: 'export function createWorker' },
  {
    name: 'createLeanWorker',
    file: 'lib/runtime/worker.ts',
    declaration: 'export function createLeanWorker',
  },
  { name: 'JobClient', file: 'lib/client/job-client.ts', declaration: 'export class JobClient' },
  {
    name: 'batchChild',
    file: 'lib/client/batch-entries.ts',
    declaration: 'export function batchChild<Data>(',
  },
  { name: 'JobQueue', file: 'lib/constructs/job-queue.ts', declaration: 'export class JobQueue' },
  { name: 'runJob', file: 'lib/testing/run-job.ts', declaration: 'export async function runJob' },
  { name: 'jobRecord', file: 'lib/testing/sqs-events.ts', declaration: 'export function jobRecord<Data>' },
  { name: 'sqsRecord', file: 'lib/testing/sqs-events.ts', declaration: 'export function sqsRecord' },
  { name: 'MemorySqs', file: 'lib/testing/memory-sqs.ts', declaration: 'export class MemorySqs' },
  {
    name: 'MemoryIdempotencyStore',
    file: 'lib/testing/memory-store.ts',
    declaration: 'export class MemoryIdempotencyStore',
  },
  { name: 'JobLogger', file: 'lib/core/logger.ts', declaration: 'export interface JobLogger' },
] as const;

/** The ```ts blocks after `@example` in the docstring right above `declaration`, without the ` * ` margin. */
function examplesOf(source: string, declaration: string): string[] {
  const at = source.indexOf(`\n${declaration}`);
  if (at < 0) return [];
  const before = source.slice(0, at);
  if (!before.endsWith('*/')) return [];
  const docstring = before.slice(before.lastIndexOf('/**'));
  const lines = docstring.split('\n').map((line) => line.replace(/^\s*\* ?/, ''));
  const examples: string[] = [];
  let inExample = false;
  let block: string[] | undefined;
  for (const line of lines) {
    if (block !== undefined) {
      if (line.trim() === '```') {
        examples.push(block.join('\n'));
        block = undefined;
      } else block.push(line);
    } else if (line.startsWith('@example')) inExample = true;
    else if (line.startsWith('@')) inExample = false;
    else if (inExample && /^```(ts|typescript)\s*$/.test(line.trim())) block = [];
  }
  return examples;
}

describe('the @example of each main API type-checks', () => {
  it('defineJob, createWorker, JobClient, JobQueue and the test kit each have a ```ts @example that tsc accepts', () => {
    const files = new Map<string, string>();
    const sources: Record<string, string> = {};
    for (const { name, file, declaration } of DOCUMENTED) {
      const examples = examplesOf(readFileSync(join(root, file), 'utf8'), declaration);
      expect(examples.length, `${name} (${file}) has no \`\`\`ts block under @example`).toBeGreaterThan(0);
      examples.forEach((code, i) => {
        const example = `${name}-${i + 1}.ts`;
        files.set(example, `${name} (${file}), example ${i + 1}`);
        sources[example] = code;
      });
    }
    const { status, output } = typeCheck(sources, 'doc-examples');
    const failing = [...files].filter(([example]) => output.includes(example)).map(([, what]) => what);
    expect(
      { exit: status, failing },
      `tsc rejects the examples of ${failing.join(', ') || '(none named)'}:\n${output}`,
    ).toEqual({ exit: 0, failing: [] });
  }, 120_000);
});
