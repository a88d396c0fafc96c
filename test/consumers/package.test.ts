/**
 * The packed tarball as a registry would see it: publint finds no error, Are The Types Wrong
 * finds no problem for an ESM-only package, `npm publish --dry-run` accepts it; and the copies
 * and versions the examples rely on match what the tarball ships.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { describe, expect, inject, it } from 'vitest';
import { expectSuccess, REPO_ROOT, report, run, seconds, tail } from './support.ts';

const { tarball, unpacked, producerPython } = inject('consumers');
const rootPackage = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
  dependencies: Record<string, string>;
};

describe('the packed tarball', () => {
  it('passes publint without errors', async () => {
    const bytes = readFileSync(tarball);
    const started = performance.now();
    const { messages, pkg } = await publint({
      pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
      level: 'suggestion',
    });
    const lines = messages.map((m) => `${m.type}: ${formatMessage(m, pkg) ?? m.code}`);
    report(
      `publint: ${seconds(performance.now() - started)}, ${lines.length} message(s)${lines.map((l) => `\n  ${l}`).join('')}`,
    );
    expect(messages.filter((m) => m.type === 'error').map((m) => formatMessage(m, pkg) ?? m.code)).toEqual(
      [],
    );
  });

  it('has types that resolve for ESM consumers (attw --profile esm-only)', async () => {
    const result = await run(
      'npx',
      ['attw', tarball, '--profile', 'esm-only', '--format', 'ascii', '--no-emoji', '--no-color'],
      { cwd: REPO_ROOT, env: process.env },
    );
    report(`attw: ${seconds(result.ms)}, exit ${result.code}`);
    expectSuccess('attw --profile esm-only', result);
  });

  it('is accepted by npm publish --dry-run', async () => {
    // The tarball itself (no second build); --dry-run, and npm_config_dry_run as a second guard.
    const result = await run('npm', ['publish', tarball, '--dry-run'], {
      cwd: REPO_ROOT,
      env: { ...process.env, npm_config_dry_run: 'true' },
    });
    expectSuccess('npm publish --dry-run', result);
    expect(`${result.stdout}\n${result.stderr}`).toContain(`${rootPackage.name}@${rootPackage.version}`);
    expect(result.stderr).toContain('(dry-run)');
    report(`npm publish --dry-run: ${seconds(result.ms)}\n${tail(result.stderr, 12)}`);
  });

  it('ships the envelope schema the Python example validates with (same bytes)', () => {
    const shipped = readFileSync(join(unpacked, 'package', 'lib', 'core', 'envelope.schema.json'), 'utf8');
    const copy = readFileSync(join(producerPython, 'envelope.schema.json'), 'utf8');
    expect(
      copy,
      'examples/producer-python/envelope.schema.json differs from the shipped schema: copy lib/core/envelope.schema.json there',
    ).toBe(shipped);
    const exported = (
      JSON.parse(readFileSync(join(unpacked, 'package', 'package.json'), 'utf8')) as {
        exports: Record<string, unknown>;
      }
    ).exports['./envelope.schema.json'];
    expect(exported).toBe('./lib/core/envelope.schema.json');
  });

  it('examples depend on the same versions as the repo (so the npm cache serves their installs)', () => {
    for (const example of ['cdk-app', 'producer-js', 'migrate-from-powertools']) {
      const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'examples', example, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      for (const [name, range] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
        if (name === rootPackage.name) {
          expect(range, `${example}: ${name}`).toBe(
            `file:../../${rootPackage.name}-${rootPackage.version}.tgz`,
          );
        } else {
          // A package the repo itself depends on (the AWS SDK clients) counts as well.
          const rootRange = rootPackage.devDependencies[name] ?? rootPackage.dependencies[name];
          expect(range, `${example}: ${name} (the repo has ${rootRange})`).toBe(rootRange);
        }
      }
    }
  });
});
