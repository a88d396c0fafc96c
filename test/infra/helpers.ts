/**
 * Helpers of the infrastructure tests: temporary cloud-assembly directories, logical ids, IAM
 * statements of a role read from a synthesized template, and the project's source texts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The project's root directory. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Each TypeScript source file's text under `dir` (relative to the project root), by path relative to `dir`. */
export function sourceTexts(dir: string): Map<string, string> {
  const root = path.join(PROJECT_ROOT, dir);
  const walk = (d: string): string[] =>
    fs.readdirSync(d, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) return walk(full);
      return /\.[cm]?ts$/.test(entry.name) ? [full] : [];
    });
  return new Map(walk(root).map((file) => [path.relative(root, file), fs.readFileSync(file, 'utf8')]));
}

/** A new empty directory for a cloud assembly; remove it with {@link removeDir}. */
export function tempOutdir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sqs-jobs-${prefix}-`));
}

export function removeDir(dir: string | undefined): void {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
}

/** Logical id of a construct's CloudFormation resource (its default child when it is an L2). */
export function logicalId(construct: IConstruct): string {
  const element = (construct.node.defaultChild ?? construct) as CfnElement;
  return Stack.of(construct).getLogicalId(element);
}

/** The logical id a `Ref` or `Fn::GetAtt` points at; undefined for anything else. */
export function referencedId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof v.Ref === 'string') return v.Ref;
  if (Array.isArray(v['Fn::GetAtt']) && typeof v['Fn::GetAtt'][0] === 'string') return v['Fn::GetAtt'][0];
  return undefined;
}

/** One statement of an identity policy, normalized: sorted actions, resources as logical ids or JSON. */
export interface NormalizedStatement {
  readonly effect: string;
  readonly actions: readonly string[];
  readonly resources: readonly string[];
}

interface RawStatement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

/**
 * Every statement of every `AWS::IAM::Policy` attached to the role, and the role's managed policies.
 * Resources given as `Ref`/`Fn::GetAtt` become the logical id; others are JSON strings.
 */
export function roleStatements(
  template: { Resources?: Resources },
  roleLogicalId: string,
): { statements: NormalizedStatement[]; managedPolicies: unknown[] } {
  const resources = template.Resources ?? {};
  const statements: NormalizedStatement[] = [];
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = (resource.Properties?.Roles ?? []) as unknown[];
    if (!roles.some((r) => referencedId(r) === roleLogicalId)) continue;
    const doc = resource.Properties?.PolicyDocument as { Statement: RawStatement[] };
    for (const s of doc.Statement) {
      const actions = (Array.isArray(s.Action) ? s.Action : [s.Action]).slice().sort();
      const rawResources = Array.isArray(s.Resource) ? s.Resource : [s.Resource];
      statements.push({
        effect: s.Effect,
        actions,
        resources: rawResources.map((r) => referencedId(r) ?? JSON.stringify(r)),
      });
    }
  }
  const role = resources[roleLogicalId];
  return { statements, managedPolicies: (role?.Properties?.ManagedPolicyArns as unknown[]) ?? [] };
}

/** Actions granted on the resource with this logical id (union over statements). */
export function actionsOn(statements: readonly NormalizedStatement[], resourceId: string): string[] {
  return [
    ...new Set(statements.filter((s) => s.resources.includes(resourceId)).flatMap((s) => s.actions)),
  ].sort();
}

/**
 * Copies a bundled worker to an empty temporary directory (so nothing can be resolved from the
 * project's node_modules), then imports it with the current Node (24 under `npx vitest`) and,
 * when `event` is given, calls its handler. Returns what the child printed as JSON.
 */
export function loadBundledHandler(
  assetDirectory: string,
  entryFile: string,
  handlerName: string,
  event?: unknown,
  env: Record<string, string> = {},
): { handlerType: string; result?: unknown } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqs-jobs-bundle-'));
  try {
    fs.cpSync(assetDirectory, dir, { recursive: true });
    const file = path.join(dir, path.basename(entryFile));
    const script = `
      const m = await import(${JSON.stringify(`file://${file}`)});
      const h = m[${JSON.stringify(handlerName)}];
      const out = { handlerType: typeof h };
      const event = ${JSON.stringify(event ?? null)};
      if (event !== null) out.result = await h(event, {});
      process.stdout.write(JSON.stringify(out));
    `;
    const stdout = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    });
    const lastLine = stdout.trim().split('\n').at(-1) ?? '{}';
    return JSON.parse(lastLine) as { handlerType: string; result?: unknown };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
