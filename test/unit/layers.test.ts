/**
 * The folders of lib/ in layers (.dependency-cruiser.cjs): dependency-cruiser finds no import
 * that breaks a rule (a folder importing its own layer or one above, constructs importing the
 * runtime, the runtime importing the CDK, business logic importing Middy or the runtime), every
 * folder of lib/ has a layer, and the graph between folders has no cycle. A failure names the
 * edge: `rule: from → to`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;

interface Rule {
  readonly name: string;
  readonly from: { readonly path?: string };
  readonly to: { readonly path?: string | string[] };
}
const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs')) as {
  forbidden: Rule[];
};

interface CruiseResult {
  readonly modules: { source: string; dependencies: { resolved: string }[] }[];
  readonly summary: { violations: { from: string; to: string; rule: { name: string } }[] };
}

/** lib/cli/io.ts → `cli`; lib/index.ts → `index.ts` (the folder, or the file at lib's top). */
function folderOf(path: string): string | undefined {
  return /^lib\/([^/]+)/.exec(path)?.[1];
}

/** The edges between folders of lib/, `from → to`, each once. */
function folderEdges(result: CruiseResult): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const { source, dependencies } of result.modules) {
    const from = folderOf(source);
    if (from === undefined) continue;
    for (const { resolved } of dependencies) {
      const to = folderOf(resolved);
      if (to === undefined || to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)?.add(to);
    }
  }
  return edges;
}

/** Every cycle found by a depth-first walk, as `a → b → a`. */
function cycles(edges: Map<string, Set<string>>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const walk = (node: string, path: string[]): void => {
    const at = path.indexOf(node);
    if (at >= 0) {
      found.push([...path.slice(at), node].join(' → '));
      return;
    }
    if (done.has(node)) return;
    for (const next of edges.get(node) ?? []) walk(next, [...path, node]);
    done.add(node);
  };
  for (const node of edges.keys()) walk(node, []);
  return found;
}

describe('the layers of lib/ (.dependency-cruiser.cjs)', () => {
  let result: CruiseResult;

  beforeAll(() => {
    const run = spawnSync(
      join(root, 'node_modules', '.bin', 'depcruise'),
      ['lib', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.status !== 0 && run.stdout === '') throw new Error(`depcruise failed:\n${run.stderr}`);
    result = JSON.parse(run.stdout) as CruiseResult;
  }, 120_000);

  it('no import breaks a rule (a folder imports only lower layers; constructs not the runtime; runtime not the CDK)', () => {
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(violations, 'see the rule of that name in .dependency-cruiser.cjs').toEqual([]);
  });

  it('every folder of lib/ (and lib/index.ts) has its layer', () => {
    const layered = config.forbidden
      .map((rule) => /^layer-(.+)$/.exec(rule.name)?.[1])
      .filter((name) => name !== undefined)
      .sort();
    const entries = readdirSync(join(root, 'lib'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
      .map((entry) => entry.name)
      .sort();
    expect(entries, 'add the folder to LAYERS in .dependency-cruiser.cjs').toEqual(layered);
  });

  it('no cycle between folders', () => {
    const edges = folderEdges(result);
    expect(edges.size).toBeGreaterThan(5);
    expect(cycles(edges)).toEqual([]);
  });

  it('the layer rules forbid an arrow up or sideways, and allow one down', () => {
    const rule = (name: string) => config.forbidden.find((r) => r.name === name);
    const forbids = (name: string, to: string) => new RegExp(rule(name)?.to.path as string).test(to);
    expect(forbids('layer-constructs', 'lib/console/server.ts')).toBe(true);
    expect(forbids('layer-ops', 'lib/local/runtime.ts')).toBe(true);
    expect(forbids('layer-runtime', 'lib/index.ts')).toBe(true);
    expect(forbids('layer-client', 'lib/runtime/worker.ts')).toBe(true);
    expect(forbids('layer-core', 'lib/client/job-client.ts')).toBe(true);
    expect(forbids('layer-ops', 'lib/runtime/job.ts')).toBe(false);
    expect(forbids('layer-cli', 'lib/console/server.ts')).toBe(false);
    expect(forbids('layer-client', 'lib/clientele/x.ts')).toBe(false);
    expect(forbids('layer-cli', 'lib/cli/io.ts')).toBe(false);
  });
});
