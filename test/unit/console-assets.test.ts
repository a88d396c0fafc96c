/**
 * The console page's file list (lib/console/assets.ts) is derived from lib/console/page/ plus the
 * vendor libraries: every module the page imports, and every file index.html loads, is in it, so
 * the console serves (and bin/build.ts publishes) the whole page.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { consoleAssetSources, loadConsoleAssets } from '../../lib/console/assets.ts';

const sources = consoleAssetSources();

describe('console assets', () => {
  it('lists every module the page imports and every file index.html loads', () => {
    const needed = new Set<string>();
    for (const [name, source] of Object.entries(sources)) {
      if (!source.startsWith('lib/console/page/')) continue;
      const text = readFileSync(source, 'utf8');
      if (name.endsWith('.js')) {
        for (const [, spec] of text.matchAll(/^import [^'"]*['"](\.\/[^'"]+)['"]/gm)) {
          needed.add(new URL(spec as string, `http://page/${name}`).pathname.slice(1));
        }
      }
      if (name === 'index.html') {
        for (const [, path] of text.matchAll(/(?:src|href)="\/([^"]+)"/g)) needed.add(path as string);
      }
    }
    expect(needed.size).toBeGreaterThan(5);
    for (const name of needed) expect(sources, name).toHaveProperty([name]);
  });

  it('serves each file under its name, the index apart, and no types file', async () => {
    const assets = await loadConsoleAssets();
    expect([...assets.files.keys()].sort()).toEqual(
      Object.keys(sources)
        .filter((name) => name !== 'index.html')
        .map((name) => `/${name}`)
        .sort(),
    );
    expect(Object.keys(sources).filter((name) => name.endsWith('.ts'))).toEqual([]);
    expect(assets.files.get('/app.js')?.type).toBe('text/javascript; charset=utf-8');
    expect(assets.index).toContain('__SQS_JOBS_TOKEN__');
  });
});
