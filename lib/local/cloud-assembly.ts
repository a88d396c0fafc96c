/**
 * Reads a CDK cloud assembly (the `cdk.out` directory): `manifest.json` → the stack artifact
 * (`type: aws:cloudformation:stack`) → its template file, and the asset manifests
 * (`type: cdk:asset-manifest`) that say which directory holds each Lambda bundle.
 *
 * Format: the cloud assembly schema of `@aws-cdk/cloud-assembly-schema` (manifest `artifacts`,
 * `properties.templateFile`, asset manifest `files.<hash>.source.path` and
 * `destinations.*.objectKey`). Nested assemblies (`cdk:cloud-assembly`, from Stages) are searched
 * too.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { CloudAssemblyError } from './errors.ts';
import type { CfnResource, CfnTemplate } from './template-resolver.ts';

/** One stack found in a cloud assembly. */
export interface AssemblyStack {
  /** Artifact id in manifest.json (what `cdk deploy <id>` takes). */
  readonly artifactId: string;
  /** CloudFormation stack name (`properties.stackName`, else the artifact id). */
  readonly stackName: string;
  /** Absolute path of the template file. */
  readonly templateFile: string;
  /** The parsed template. */
  readonly template: CfnTemplate;
  /** Account of the stack's environment; undefined when environment-agnostic (`unknown-account`). */
  readonly account: string | undefined;
  /** Region of the stack's environment; undefined when environment-agnostic (`unknown-region`). */
  readonly region: string | undefined;
  /** Absolute path of the assembly directory holding the stack. */
  readonly assemblyDir: string;
}

/** A file asset of an asset manifest. */
interface FileAsset {
  readonly sourcePath: string;
  readonly packaging: string | undefined;
  readonly objectKeys: readonly string[];
}

interface ManifestArtifact {
  readonly type: string;
  readonly environment?: string;
  readonly properties?: Record<string, unknown>;
  readonly displayName?: string;
}

function readJson(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new CloudAssemblyError(`cannot read ${what} ${file}`, { cause, context: { file } });
  }
}

function artifactsOf(dir: string): Record<string, ManifestArtifact> {
  const manifestFile = join(dir, 'manifest.json');
  if (!existsSync(manifestFile)) {
    throw new CloudAssemblyError(`no cloud assembly at ${dir} (manifest.json missing): synthesize first`, {
      context: { dir },
    });
  }
  const manifest = readJson(manifestFile, 'cloud assembly manifest') as {
    artifacts?: Record<string, ManifestArtifact>;
  };
  return manifest.artifacts ?? {};
}

/** Every stack artifact in the assembly at `dir` and in its nested assemblies. */
function collectStacks(dir: string): { id: string; artifact: ManifestArtifact; dir: string }[] {
  const out: { id: string; artifact: ManifestArtifact; dir: string }[] = [];
  for (const [id, artifact] of Object.entries(artifactsOf(dir))) {
    if (artifact.type === 'aws:cloudformation:stack') out.push({ id, artifact, dir });
    if (artifact.type === 'cdk:cloud-assembly') {
      const nested = artifact.properties?.directoryName;
      if (typeof nested === 'string') out.push(...collectStacks(join(dir, nested)));
    }
  }
  return out;
}

function parseEnvironment(env: string | undefined): { account?: string; region?: string } {
  const m = /^aws:\/\/([^/]+)\/([^/]+)$/.exec(env ?? '');
  if (!m) return {};
  const account = m[1] === 'unknown-account' ? undefined : m[1];
  const region = m[2] === 'unknown-region' ? undefined : m[2];
  return { account, region };
}

/**
 * The names of the stacks in the assembly at `assemblyDir`, as `artifactId` / `stackName` pairs.
 * @throws {CloudAssemblyError} when there is no manifest.json.
 */
export function listStacks(assemblyDir: string): { artifactId: string; stackName: string }[] {
  return collectStacks(resolve(assemblyDir)).map(({ id, artifact }) => ({
    artifactId: id,
    stackName: typeof artifact.properties?.stackName === 'string' ? artifact.properties.stackName : id,
  }));
}

/**
 * Reads one stack of the cloud assembly.
 * @param assemblyDir the `cdk.out` directory.
 * @param stack artifact id, stack name or display name (e.g. `Stage/Stack`); optional when the
 *   assembly holds exactly one stack.
 * @throws {CloudAssemblyError} when the assembly is missing, the stack is not found or ambiguous,
 *   or the template cannot be read.
 */
export function readStack(assemblyDir: string, stack?: string): AssemblyStack {
  const dir = resolve(assemblyDir);
  const stacks = collectStacks(dir);
  const names = stacks.map((s) => s.id);
  let found: (typeof stacks)[number] | undefined;
  if (stack === undefined) {
    if (stacks.length !== 1) {
      throw new CloudAssemblyError(
        stacks.length === 0
          ? `the cloud assembly at ${dir} holds no stack`
          : `the cloud assembly at ${dir} holds ${stacks.length} stacks (${names.join(', ')}): choose one with the stackName option`,
        { context: { dir, stacks: names } },
      );
    }
    found = stacks[0];
  } else {
    found = stacks.find(
      (s) => s.id === stack || s.artifact.properties?.stackName === stack || s.artifact.displayName === stack,
    );
    if (!found) {
      throw new CloudAssemblyError(
        `no stack ${stack} in the cloud assembly at ${dir} (found: ${names.join(', ')})`,
        {
          context: { dir, stacks: names },
        },
      );
    }
  }
  const { id, artifact, dir: stackDir } = found as (typeof stacks)[number];
  const templateName = artifact.properties?.templateFile;
  if (typeof templateName !== 'string') {
    throw new CloudAssemblyError(`stack artifact ${id} has no templateFile`, { context: { dir, stack: id } });
  }
  const templateFile = join(stackDir, templateName);
  const template = readJson(templateFile, 'stack template') as CfnTemplate;
  if (template === null || typeof template !== 'object' || typeof template.Resources !== 'object') {
    throw new CloudAssemblyError(`template ${templateFile} has no Resources`, { context: { templateFile } });
  }
  const env = parseEnvironment(artifact.environment);
  return {
    artifactId: id,
    stackName: typeof artifact.properties?.stackName === 'string' ? artifact.properties.stackName : id,
    templateFile,
    template,
    account: env.account,
    region: env.region,
    assemblyDir: stackDir,
  };
}

function fileAssets(assemblyDir: string): FileAsset[] {
  const out: FileAsset[] = [];
  for (const artifact of Object.values(artifactsOf(assemblyDir))) {
    if (artifact.type !== 'cdk:asset-manifest') continue;
    const file = artifact.properties?.file;
    if (typeof file !== 'string') continue;
    const manifest = readJson(join(assemblyDir, file), 'asset manifest') as {
      files?: Record<
        string,
        {
          source?: { path?: string; packaging?: string };
          destinations?: Record<string, { objectKey?: string }>;
        }
      >;
    };
    for (const asset of Object.values(manifest.files ?? {})) {
      if (typeof asset.source?.path !== 'string') continue;
      out.push({
        sourcePath: asset.source.path,
        packaging: asset.source.packaging,
        objectKeys: Object.values(asset.destinations ?? {})
          .map((d) => d.objectKey)
          .filter((k): k is string => typeof k === 'string'),
      });
    }
  }
  return out;
}

/**
 * The directory holding the bundled code of a Lambda function resource, as it deploys.
 *
 * Found by the resource's `Metadata['aws:asset:path']` when present (written by the CDK CLI),
 * else by matching `Properties.Code.S3Key` against the `objectKey` of a file asset in the
 * assembly's asset manifests (programmatic synthesis does not write the metadata).
 *
 * @param s3Key the resolved `Code.S3Key`, if any.
 * @returns an absolute directory path.
 * @throws {CloudAssemblyError} when no asset matches, or the asset is a file (a pre-built zip)
 *   rather than a directory.
 */
export function functionAssetDir(
  stack: AssemblyStack,
  logicalId: string,
  resource: CfnResource,
  s3Key: string | undefined,
): string {
  let relative: string | undefined;
  const metaPath = resource.Metadata?.['aws:asset:path'];
  if (typeof metaPath === 'string') relative = metaPath;
  else if (s3Key !== undefined)
    relative = fileAssets(stack.assemblyDir).find((a) => a.objectKeys.includes(s3Key))?.sourcePath;
  if (relative === undefined) {
    throw new CloudAssemblyError(
      `cannot find the code asset of function ${logicalId} in ${stack.assemblyDir} (no aws:asset:path metadata, no asset with object key ${s3Key ?? '(none)'})`,
      { context: { logicalId, s3Key } },
    );
  }
  const dir = isAbsolute(relative) ? relative : join(stack.assemblyDir, relative);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new CloudAssemblyError(
      `the code asset of function ${logicalId} is not a directory: ${dir} (pre-built zip assets are not supported locally)`,
      { context: { logicalId, dir } },
    );
  }
  return dir;
}
