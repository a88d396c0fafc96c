/**
 * docs/architecture.md's module map cannot drift from the tree: every `lib/...` path its table
 * names exists, and every folder of lib/ and each of their direct subfolders (lib/runtime/,
 * lib/runtime/idempotency/) has its line. Files are named only where the map wants them, so
 * splitting a file into a folder costs one line in the map.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;

/** The `lib/...` paths in the first column of the table under "## Module map". */
function mapPaths(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Module map\n'));
  if (section === undefined) throw new Error('docs/architecture.md has no "## Module map" section');
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => {
    const firstColumn = row.split('|')[1] ?? '';
    return [...firstColumn.matchAll(/`(lib\/[^`]*)`/g)].map((m) => m[1] as string);
  });
}

/** lib/'s folders and their direct subfolders, each as `lib/x/` or `lib/x/y/`. */
function libFolders(): string[] {
  const dirs = (path: string) =>
    readdirSync(join(root, path), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${path}${entry.name}/`);
  return dirs('lib/').flatMap((folder) => [folder, ...dirs(folder)]);
}

describe("docs/architecture.md's module map", () => {
  const named = mapPaths(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'));

  it('names only paths that exist', () => {
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });

  it('names every folder of lib/ and its direct subfolders', () => {
    const missing = libFolders().filter((folder) => !named.includes(folder));
    expect(missing, 'add a line for each to the table under "## Module map"').toEqual([]);
  });
});
