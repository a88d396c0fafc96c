/**
 * The install lines a user copies (README.md, docs/own-app.md) bring what `cdk synth` of a JobQueue
 * needs without Docker: NodejsFunction bundles the workers with a locally installed esbuild, else
 * in a Docker container, and `npx cdk` runs the project's aws-cdk CLI.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const ownApp = readFileSync(new URL('../../docs/own-app.md', import.meta.url), 'utf8');

/** The packages the `npm install` commands of `text` name, flags left out. */
function installed(text: string): Set<string> {
  const names = [...text.matchAll(/npm install ([^#`|\n]+)/g)].flatMap((m) =>
    (m[1] ?? '').split(/\s+/).filter((word) => word !== '' && !word.startsWith('-') && word !== '&&'),
  );
  return new Set(names);
}

describe('install lines for a CDK app with workers', () => {
  it.each([
    ['README.md', readme.slice(readme.indexOf('npm install sqs-jobs aws-cdk-lib'))],
    ['docs/own-app.md', ownApp.split('\n').find((line) => line.startsWith('| CDK app + its workers')) ?? ''],
  ])('%s names esbuild and the CDK CLI beside the libraries', (_file, text) => {
    const names = installed(text.split('\n').slice(0, 3).join('\n'));
    for (const name of ['sqs-jobs', 'aws-cdk-lib', 'constructs', 'cdk-nag', 'aws-cdk', 'esbuild']) {
      expect(names, `${name} in ${JSON.stringify(text.slice(0, 300))}`).toContain(name);
    }
  });
});
