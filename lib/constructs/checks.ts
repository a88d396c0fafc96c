/**
 * The checks every sqs-jobs app should synthesize with, in one call for any CDK app:
 * - cdk-nag's AwsSolutions rule pack (cdk-nag 3, a CDK validation plugin): an unacknowledged
 *   error fails synth; acknowledge a finding with `Validations.of(scope).acknowledge({ id, reason })`.
 *   https://github.com/cdklabs/cdk-nag/blob/main/RULES.md#awssolutions
 * - the CloudFormation template validator bundled with aws-cdk-lib, with its findings turned
 *   into errors: the feature flag `@aws-cdk/core:validateAgainstDefaultRules` (without it the
 *   validator only warns). https://docs.aws.amazon.com/cdk/v2/guide/featureflags.html
 * The report of both is written to `<outdir>/validation-report.json`.
 *
 * The flag is app context. CDK reads it from the app (the root) at synth, and `node.setContext`
 * refuses once the app has children. So: on an app that has no stacks yet it is set the normal
 * way; on an app that already has stacks it is written into the app's context directly (safe for
 * this flag: nothing reads it before synth). The documented alternatives, for apps built
 * elsewhere: `new App({ postCliContext: jobsAppContext() })`, {@link createJobsApp}, or the
 * flag in cdk.json's `context`.
 *
 * cdk-nag is an optional peer dependency: it is loaded only when the nag checks are on.
 */
import { createRequire } from 'node:module';
import {
  App,
  type AppProps,
  type IPolicyValidationContext,
  type IPolicyValidationPlugin,
  type PolicyValidationPluginReport,
  Stack,
} from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import {
  awsCdkLibVersion,
  hasTemplateValidator,
  TEMPLATE_VALIDATOR_ERRORS_FLAG,
  TEMPLATE_VALIDATOR_SINCE,
  validationsOf,
} from './cdk-features.ts';
import { JobsConfigError } from './errors.ts';

export { TEMPLATE_VALIDATOR_ERRORS_FLAG } from './cdk-features.ts';

/** Options of cdk-nag's rule pack (cdk-nag's `NagPackProps`, repeated here so cdk-nag stays optional). */
export interface JobsNagOptions {
  /**
   * Extended explanations on findings.
   * @default false
   */
  readonly verbose?: boolean;
  /**
   * Write acknowledged rules into the resources' CloudFormation metadata (`cdk_nag.rules_to_suppress`)
   * for audit tooling built for cdk-nag 2.
   * @default false
   */
  readonly writeSuppressionsToCloudFormation?: boolean;
}

/** Options of {@link applyJobsChecks}. */
export interface JobsChecksOptions {
  /**
   * Run cdk-nag's AwsSolutions checks. Needs cdk-nag 3 installed (an optional peer dependency).
   * @default true
   */
  readonly nag?: boolean;
  /** @default - cdk-nag's defaults */
  readonly nagOptions?: JobsNagOptions;
  /**
   * Turn the template validator's findings into errors (sets `@aws-cdk/core:validateAgainstDefaultRules`
   * to true, over anything in cdk.json or `-c`). This flag is per app: applied to a stack, it
   * still covers every stack of the app. `false` leaves the app's setting as it is.
   * @default true
   */
  readonly templateFindingsAreErrors?: boolean;
}

/** Context entries of an sqs-jobs app: `{ '@aws-cdk/core:validateAgainstDefaultRules': true }` (a new object each call). */
export function jobsAppContext(): Record<string, unknown> {
  return { [TEMPLATE_VALIDATOR_ERRORS_FLAG]: true };
}

/** Properties of {@link createJobsApp}: the App's own props plus the checks. */
export interface JobsAppProps extends AppProps {
  /** @default - every check on (see {@link JobsChecksOptions}) */
  readonly checks?: JobsChecksOptions;
}

/**
 * A new CDK `App` with {@link applyJobsChecks} applied: cdk-nag AwsSolutions on every stack and
 * template validator findings as errors.
 * @throws {JobsConfigError} when cdk-nag is needed but not installed.
 */
export function createJobsApp(props: JobsAppProps = {}): App {
  const { checks, ...appProps } = props;
  const app = new App(appProps);
  applyJobsChecks(app, checks);
  return app;
}

/** The rule pack class of cdk-nag 3, as far as it is used here. */
interface NagPackClass {
  new (
    scope?: IConstruct,
    props?: JobsNagOptions,
  ): IPolicyValidationPlugin & { validateScope(scope: IConstruct): PolicyValidationPluginReport };
}

const requireOptional = createRequire(import.meta.url);

function loadAwsSolutionsChecks(scopePath: string): NagPackClass {
  try {
    return (requireOptional('cdk-nag') as { AwsSolutionsChecks: NagPackClass }).AwsSolutionsChecks;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw error;
    throw new JobsConfigError('applyJobsChecks', scopePath, [
      "nag: cdk-nag is not installed: npm install --save-dev 'cdk-nag@^3', or pass { nag: false }",
    ]);
  }
}

/** Runs a cdk-nag pack on one stack's constructs only (cdk-nag itself checks the whole app or stage). */
class StackScopedNag implements IPolicyValidationPlugin {
  readonly name: string;
  readonly version?: string;
  readonly ruleIds?: string[];

  constructor(
    private readonly pack: IPolicyValidationPlugin & {
      validateScope(scope: IConstruct): PolicyValidationPluginReport;
    },
    private readonly stack: Stack,
  ) {
    this.name = pack.name;
    this.version = pack.version;
    this.ruleIds = pack.ruleIds;
  }

  validate(_context: IPolicyValidationContext): PolicyValidationPluginReport {
    return this.pack.validateScope(this.stack);
  }
}

/** Scopes cdk-nag was registered for, so a second call adds no second copy of the findings. */
const nagScopes = new WeakSet<IConstruct>();

/**
 * Sets the template validator flag on the app. On an app without children this is
 * `node.setContext`; afterwards constructs refuses `setContext` (children might have read the
 * value while being built), but this flag is only read at synth, by aws-cdk-lib's template
 * validation, so it is written into the app's context directly.
 */
function setTemplateFindingsAreErrors(app: App): void {
  if (app.node.tryGetContext(TEMPLATE_VALIDATOR_ERRORS_FLAG) === true) return;
  if (app.node.children.length === 0) {
    app.node.setContext(TEMPLATE_VALIDATOR_ERRORS_FLAG, true);
    return;
  }
  const node = app.node as unknown as { _context?: Record<string, unknown> };
  if (node._context === undefined) node._context = {};
  if (typeof node._context === 'object' && node._context !== null)
    node._context[TEMPLATE_VALIDATOR_ERRORS_FLAG] = true;
  if (app.node.tryGetContext(TEMPLATE_VALIDATOR_ERRORS_FLAG) !== true) {
    throw new JobsConfigError('applyJobsChecks', '(app)', [
      `templateFindingsAreErrors: the app already has stacks and its context cannot be changed any more: create it with createJobsApp() or new App({ postCliContext: jobsAppContext() }), or set "${TEMPLATE_VALIDATOR_ERRORS_FLAG}": true in cdk.json's context`,
    ]);
  }
}

/**
 * Registers the sqs-jobs checks on an app or a stack, before or after its stacks are built:
 * cdk-nag's AwsSolutions pack (errors fail synth; on a stack, only that stack is checked) and the
 * template validator's findings as errors (always app-wide: CDK has one switch per app). Calling
 * it again for the same scope adds nothing.
 *
 * @example
 * const app = new App();
 * new MyJobsStack(app, 'Jobs');
 * applyJobsChecks(app);               // or applyJobsChecks(stack) for one stack's nag checks
 * app.synth();
 *
 * @param scope an `App`, or a `Stack` inside one.
 * @throws {JobsConfigError} when `scope` is neither an App nor a Stack in an App, or cdk-nag is
 *   needed and not installed, or the flag cannot be set (see the module docs), or the installed
 *   aws-cdk-lib is older than a check needs (nag: 2.257.0, cdk-nag 3's floor; template findings:
 *   2.262.0, the validator's first release; the constructs themselves work from 2.224.0).
 */
export function applyJobsChecks(scope: App | Stack, options: JobsChecksOptions = {}): void {
  const root = scope.node.root;
  const isApp = App.isApp(scope);
  if (!App.isApp(root) || (!isApp && !Stack.isStack(scope))) {
    throw new JobsConfigError('applyJobsChecks', scope.node.path || '(root)', [
      'scope: must be a CDK App, or a Stack inside an App',
    ]);
  }
  if (options.nag ?? true) {
    const covered = nagScopes.has(scope) || nagScopes.has(root);
    if (!covered) {
      const validations = validationsOf(scope);
      if (validations === undefined) {
        throw new JobsConfigError('applyJobsChecks', scope.node.path || '(app)', [
          `nag: cdk-nag 3 runs as a policy validation plugin, which aws-cdk-lib ${awsCdkLibVersion()} does not have (cdk-nag 3 needs aws-cdk-lib 2.257.0 or later): upgrade aws-cdk-lib, or pass { nag: false }`,
        ]);
      }
      const AwsSolutionsChecks = loadAwsSolutionsChecks(scope.node.path || '(app)');
      const pack = new AwsSolutionsChecks(scope, options.nagOptions);
      validations.addPlugins(isApp ? pack : new StackScopedNag(pack, scope as Stack));
      nagScopes.add(scope);
    }
  }
  if (options.templateFindingsAreErrors ?? true) {
    if (!hasTemplateValidator()) {
      throw new JobsConfigError('applyJobsChecks', scope.node.path || '(app)', [
        `templateFindingsAreErrors: aws-cdk-lib ${awsCdkLibVersion()} has no CloudFormation template validator (added in ${TEMPLATE_VALIDATOR_SINCE}): upgrade aws-cdk-lib, or pass { templateFindingsAreErrors: false }`,
      ]);
    }
    setTemplateFindingsAreErrors(root);
  }
}
