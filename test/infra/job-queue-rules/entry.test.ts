/**
 * Rule group `entry`: the entry file exists, is JavaScript/TypeScript, lies inside projectRoot
 * and exports the handler; the export scanner is conservative (refuses only when sure).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExport } from '../../../lib/constructs/job-queue/export-scan.ts';
import { entryRule } from '../../../lib/constructs/job-queue/rules/entry.ts';
import { errors, PROJECT_ROOT } from './helpers.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqs-jobs-entry-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Writes `source` to a new file in the temporary project and returns its name. */
function file(name: string, source: string): string {
  fs.writeFileSync(path.join(dir, name), source);
  return name;
}

describe('entry rule', () => {
  it('accepts the fixture worker, relative to projectRoot or absolute', () => {
    expect(errors(entryRule)).toEqual([]);
    expect(errors(entryRule, { entry: path.join(PROJECT_ROOT, 'test/fixtures/worker-handler.ts') })).toEqual(
      [],
    );
  });

  it('refuses an entry that does not exist, in one line saying how it was resolved', () => {
    expect(errors(entryRule, { entry: 'functions/nope.ts' })).toEqual([
      `entry: ${path.join(PROJECT_ROOT, 'functions/nope.ts')} does not exist (resolved against projectRoot)`,
    ]);
    expect(errors(entryRule, { entry: 'functions/nope.ts', projectRoot: undefined })).toEqual([
      `entry: ${path.resolve('functions/nope.ts')} does not exist (resolved against the working directory)`,
    ]);
  });

  it('refuses a directory, a file that is not JavaScript/TypeScript, and a file outside the bundling root', () => {
    fs.mkdirSync(path.join(dir, 'folder.ts'));
    expect(errors(entryRule, { entry: 'folder.ts', projectRoot: dir })).toEqual([
      `entry: ${path.join(dir, 'folder.ts')} is not a file (resolved against projectRoot)`,
    ]);
    expect(errors(entryRule, { entry: 'README.md' })).toEqual([
      "entry: 'README.md' is not a JavaScript or TypeScript file (.ts, .tsx, .mts, .cts, .js, .jsx, .mjs, .cjs)",
    ]);
    const outside = path.join(dir, file('outside.ts', 'export const handler = 1;'));
    expect(errors(entryRule, { entry: outside })).toEqual([
      `entry: ${outside} is outside ${PROJECT_ROOT}, the directory NodejsFunction bundles from (projectRoot, or the lock file's directory when that is above it)`,
    ]);
    expect(errors(entryRule, { entry: outside, projectRoot: dir })).toEqual([]);
  });

  it("monorepo: an entry outside projectRoot but under the lock file's directory (the repository root) is fine", () => {
    fs.writeFileSync(path.join(dir, 'package-lock.json'), '{}');
    fs.mkdirSync(path.join(dir, 'packages/infra'), { recursive: true });
    file('shared-worker.ts', 'export const handler = 1;');
    try {
      expect(
        errors(entryRule, { entry: '../../shared-worker.ts', projectRoot: path.join(dir, 'packages/infra') }),
      ).toEqual([]);
    } finally {
      fs.rmSync(path.join(dir, 'package-lock.json'));
    }
  });

  it('refuses a handler name the entry does not export', () => {
    const entry = file(
      'worker.ts',
      'const handler = async () => ({ batchItemFailures: [] });\nexport default handler;\n',
    );
    expect(errors(entryRule, { entry, projectRoot: dir })).toEqual([
      `handler: ${path.join(dir, entry)} does not export 'handler' (no export const/let/var/function/class handler, export { … as handler } or re-export of it): export it, or set handler to the name it exports`,
    ]);
    expect(errors(entryRule, { entry, projectRoot: dir, handler: 'default' })).toEqual([]);
    expect(errors(entryRule, { handler: 'main' })).toEqual([expect.stringMatching(/does not export 'main'/)]);
  });
});

describe('findExport (conservative)', () => {
  const exported: [string, string][] = [
    ['export const handler = createWorker({ jobs });', 'const'],
    ['export let handler;', 'let'],
    ['export async function handler(event) {}', 'async function'],
    ['export function handler() {}', 'function'],
    ['export function* handler() {}', 'generator'],
    ['export class handler {}', 'class'],
    ['const worker = 1;\nexport { worker as handler };', 'renamed'],
    ['const handler = 1;\nexport {\n  other,\n  handler,\n};', 'listed, multi-line'],
    ["export { handler } from './worker.ts';", 're-export'],
    ["export { worker as handler } from './worker.ts';", 'renamed re-export'],
    ["export { default as handler } from './worker.ts';", 'default re-exported by name'],
    ["export * as handler from './worker.ts';", 'namespace re-export'],
    ['const w = 1;\nexport { w as "handler" };', 'string name'],
    ['export /* the Lambda entry */ const handler = 1;', 'comment in between'],
  ];
  for (const [source, form] of exported) {
    it(`sees ${form}`, () => expect(findExport(source, 'handler')).toBe('exported'));
  }

  const unknown: [string, string][] = [
    ["export * from './worker.ts';", 'export * from'],
    ['module.exports.handler = async () => {};', 'CommonJS module.exports'],
    ['exports.handler = async () => {};', 'CommonJS exports'],
    ['export = { handler };', 'TypeScript export ='],
    ['export const { handler } = workers;', 'destructuring'],
    ['export const a = 1, handler = 2;', 'several declarations'],
  ];
  for (const [source, form] of unknown) {
    it(`gives ${form} the benefit of the doubt`, () => expect(findExport(source, 'handler')).toBe('unknown'));
  }

  const notExported: [string, string][] = [
    ['const handler = 1;\nexport default handler;', 'default export only'],
    ['export default function handler() {}', 'default function named handler'],
    ['export const handlers = 1;\nexport const myhandler = 2;', 'longer names'],
    ['// export const handler = 1;\nexport const worker = 1;', 'commented-out export... seen as text'],
    ["const s = 'export const handler';\nexport const worker = 1;", 'text in a string'],
  ];
  for (const [source, form] of notExported.slice(0, 3)) {
    it(`refuses ${form}`, () => expect(findExport(source, 'handler')).toBe('not-exported'));
  }
  it('never refuses when export-like text appears in comments or strings (conservative)', () => {
    for (const [source] of notExported.slice(3))
      expect(findExport(source, 'handler')).not.toBe('not-exported');
  });
});
