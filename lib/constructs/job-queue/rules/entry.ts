/**
 * The worker's entry file and handler: a JavaScript or TypeScript file that exists, lies inside
 * the directory NodejsFunction bundles from (`projectRoot`, or the lock file's directory when
 * that is above it) and exports the handler name. Checked here,
 * before NodejsFunction sees them, so each mistake is one line in the one `JobsConfigError`
 * (and a missing `entry` never makes NodejsFunction look for `<file>.Worker.ts`).
 * Source: https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_lambda_nodejs-readme.html
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { findExport } from '../export-scan.ts';
import { describeValue } from '../values.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

/** Entry extensions NodejsFunction accepts. */
const ENTRY_EXTENSION = /\.(jsx?|tsx?|cjs|cts|mjs|mts)$/;

function stat(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

export const entryRule: JobQueueRule = ({ props, settings }) => {
  const file = settings.entryPath;
  if (file === undefined) return []; // missing or not a string: the required rule says so
  const findings: JobQueueFinding[] = [];
  const given = props.entry;
  const resolvedFrom =
    path.isAbsolute(given) || given === file
      ? ''
      : ` (resolved against ${settings.projectRoot === undefined ? 'the working directory' : 'projectRoot'})`;

  if (!ENTRY_EXTENSION.test(file)) {
    findings.push(
      error(
        `entry: '${given}' is not a JavaScript or TypeScript file (.ts, .tsx, .mts, .cts, .js, .jsx, .mjs, .cjs)`,
      ),
    );
    return findings;
  }
  const info = stat(file);
  if (info === undefined) {
    findings.push(error(`entry: ${file} does not exist${resolvedFrom}`));
    return findings;
  }
  if (!info.isFile()) {
    findings.push(error(`entry: ${file} is not a file${resolvedFrom}`));
    return findings;
  }
  const root = settings.bundlingRoot;
  if (root !== undefined) {
    const rel = path.relative(root, file);
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      findings.push(
        error(
          `entry: ${file} is outside ${root}, the directory NodejsFunction bundles from (projectRoot, or the lock file's directory when that is above it)`,
        ),
      );
    }
  }

  const handler: unknown = settings.handler;
  if (typeof handler !== 'string' || handler === '') {
    findings.push(error(`handler: must be the exported name of the handler, got ${describeValue(handler)}`));
  } else if (!handler.includes('.')) {
    // A name with a dot is passed to Lambda as it is (`file.export`): not checked here.
    let source: string | undefined;
    try {
      source = fs.readFileSync(file, 'utf8');
    } catch {
      source = undefined; // unreadable: NodejsFunction will say so
    }
    if (source !== undefined && findExport(source, handler) === 'not-exported') {
      findings.push(
        error(
          `handler: ${file} does not export '${handler}' (no export const/let/var/function/class ${handler}, export { … as ${handler} } or re-export of it): export it, or set handler to the name it exports`,
        ),
      );
    }
  }
  return findings;
};
