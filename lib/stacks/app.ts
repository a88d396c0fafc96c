/**
 * Builds and synthesizes the CDK app without the CLI: used by bin/app.ts (under `cdk synth` /
 * `cdk deploy`), by the infrastructure tests and by the local runtime.
 *
 * The app is made by `createJobsApp` (sqs-jobs/cdk, lib/constructs/checks.ts), the same call a
 * user's app makes: every synth runs cdk-nag's AwsSolutions checks (an unacknowledged error fails
 * synth) and the CloudFormation template validator bundled with aws-cdk-lib, with its findings
 * turned into errors (feature flag `@aws-cdk/core:validateAgainstDefaultRules`). The report of
 * both is written to `<outdir>/validation-report.json`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { App, Environment } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { createJobsApp } from 'sqs-jobs/cdk';
import { JobsStack, type JobsStackProps } from './jobs-stack.ts';

/** Default stack name (and construct id). */
export const DEFAULT_STACK_NAME = 'SqsJobs';

/** Options of {@link buildApp}. */
export interface BuildAppOptions {
  /**
   * Where the cloud assembly is written.
   * @default - `CDK_OUTDIR` when run by the CDK CLI (`cdk.out`), else a new temporary directory
   */
  readonly outdir?: string;
  /**
   * Stack name and construct id.
   * @default 'SqsJobs'
   */
  readonly stackName?: string;
  /**
   * Extra context (e.g. `{ alarmEmail: 'ops@example.com', externalApiUrl: 'https://api.example.com' }`).
   * Context from the CLI (`-c key=value`, cdk.json) wins over it.
   * @default - none
   */
  readonly context?: Readonly<Record<string, unknown>>;
  /**
   * Account and region of the stack.
   * @default - environment-agnostic (resolved at deploy time)
   */
  readonly env?: Environment;
  /** Further stack props (alarm email, external API URL, queues...). @default - none */
  readonly stackProps?: Omit<JobsStackProps, 'env' | 'stackName'>;
  /**
   * Run cdk-nag's AwsSolutions checks on synth. Template validator findings are errors either way.
   * @default true
   */
  readonly nag?: boolean;
}

/** Result of {@link buildApp}. */
export interface BuiltApp {
  readonly app: App;
  readonly stack: JobsStack;
}

/**
 * Builds the app (`createJobsApp`: cdk-nag and template validator errors on every synth) and its
 * {@link JobsStack}. Nothing is synthesized until `app.synth()` (or {@link synthesizeApp});
 * building already bundles the workers with esbuild.
 * @throws {JobsConfigError} (from the constructs) when a setting is unsafe.
 */
export function buildApp(options: BuildAppOptions = {}): BuiltApp {
  const app = createJobsApp({
    outdir: options.outdir,
    context: options.context === undefined ? undefined : { ...options.context },
    checks: { nag: options.nag ?? true },
  });
  const stackName = options.stackName ?? DEFAULT_STACK_NAME;
  const stack = new JobsStack(app, stackName, { ...options.stackProps, stackName, env: options.env });
  return { app, stack };
}

/** A worker's code in the cloud assembly. */
export interface WorkerAsset {
  /** Logical queue name (`JOBS_QUEUE_NAME`). */
  readonly queueName: string;
  /** Logical id of the `AWS::Lambda::Function` in the template. */
  readonly functionLogicalId: string;
  /** Absolute path of the bundled code directory (`<outdir>/asset.<hash>`). */
  readonly assetDirectory: string;
  /** The bundled entry file in it (`index.mjs`, ESM). */
  readonly entryFile: string;
  /** Exported handler name (`handler`). */
  readonly handlerName: string;
  /** The asset hash (also the default `JOBS_HANDLER_VERSION`). */
  readonly assetHash: string;
}

/** Result of {@link synthesizeApp}. */
export interface SynthesizedApp extends BuiltApp {
  readonly assembly: cxapi.CloudAssembly;
  /** The stack's artifact: `.template` is the CloudFormation template. */
  readonly stackArtifact: cxapi.CloudFormationStackArtifact;
  /** Each worker's bundled code, in topology order. */
  readonly workers: readonly WorkerAsset[];
}

/**
 * Builds and synthesizes the app: writes the cloud assembly to `outdir`, runs cdk-nag and the
 * template validator, and locates each worker's bundled code.
 * @throws {Error} when validation fails (the message carries the report) or a setting is unsafe.
 */
export function synthesizeApp(options: BuildAppOptions = {}): SynthesizedApp {
  const built = buildApp(options);
  const assembly = built.app.synth();
  const stackArtifact = assembly.getStackArtifact(built.stack.artifactId);
  return { ...built, assembly, stackArtifact, workers: findWorkerAssets(assembly, stackArtifact) };
}

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: { readonly Code?: { readonly S3Key?: unknown }; readonly Handler?: unknown };
  readonly Metadata?: Readonly<Record<string, unknown>>;
}

/**
 * Finds the code of every worker in a synthesized assembly. A worker is an
 * `AWS::Lambda::Function` with the metadata `sqs-jobs:queue` (set by `JobQueue`); its
 * `Code.S3Key` is `<hash>.zip`, and the stack's asset manifest (`<stack>.assets.json`) maps
 * that hash to the directory `asset.<hash>` inside the assembly.
 * @throws {Error} when a worker's asset is not in the manifest.
 */
export function findWorkerAssets(
  assembly: cxapi.CloudAssembly,
  stackArtifact: cxapi.CloudFormationStackArtifact,
): WorkerAsset[] {
  const sources = new Map<string, string>();
  for (const dep of stackArtifact.dependencies) {
    if (!(dep instanceof cxapi.AssetManifestArtifact)) continue;
    const manifest = JSON.parse(fs.readFileSync(dep.file, 'utf8')) as {
      files?: Record<string, { source?: { path?: string } }>;
    };
    for (const [hash, entry] of Object.entries(manifest.files ?? {})) {
      if (entry.source?.path !== undefined)
        sources.set(hash, path.resolve(assembly.directory, entry.source.path));
    }
  }
  const resources =
    (stackArtifact.template as { Resources?: Record<string, TemplateResource> }).Resources ?? {};
  const workers: WorkerAsset[] = [];
  for (const [logicalId, resource] of Object.entries(resources)) {
    const queueName = resource.Metadata?.['sqs-jobs:queue'];
    if (resource.Type !== 'AWS::Lambda::Function' || typeof queueName !== 'string') continue;
    const key = resource.Properties?.Code?.S3Key;
    const hash = typeof key === 'string' ? key.replace(/\.zip$/, '') : undefined;
    const dir = hash === undefined ? undefined : sources.get(hash);
    if (hash === undefined || dir === undefined) {
      throw new Error(
        `worker of queue '${queueName}' (${logicalId}): its code asset is not in the asset manifest`,
      );
    }
    const handler = String(resource.Properties?.Handler ?? 'index.handler');
    const dot = handler.lastIndexOf('.');
    workers.push({
      queueName,
      functionLogicalId: logicalId,
      assetDirectory: dir,
      entryFile: path.join(dir, `${handler.slice(0, dot)}.mjs`),
      handlerName: handler.slice(dot + 1),
      assetHash: hash,
    });
  }
  return workers;
}
