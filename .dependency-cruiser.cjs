/**
 * The layers of lib/, checked by dependency-cruiser (test/unit/layers.test.ts; by hand:
 * `npx depcruise lib --config .dependency-cruiser.cjs --output-type err`, the folder graph:
 * `npm run graph`).
 *
 * LAYERS is the one place the order is written: a folder of lib/ imports only folders of a lower
 * layer (and itself), never one of its own layer or above, so an arrow only ever points down and
 * no two folders can import each other. A new folder of lib/ goes into a layer here (the test
 * fails until a `layer-<folder>` rule exists). Beside the order, DESIGN.md's other rules: constructs never import the
 * runtime, the runtime never imports the CDK, and a job's business logic never imports Middy,
 * the runtime's SQS client or the runtime's internals (it imports `sqs-jobs`).
 *
 * Parsed with swc (`parser: 'swc'`): TypeScript 7 is native and has no JS API to parse with.
 * tsconfig.json's paths resolve `sqs-jobs`, `sqs-jobs/cdk`... to lib/ as tsc does.
 */

/** Lowest first. A folder may import the folders of the layers before its own. */
const LAYERS = [
  ['core'], // what client and runtime share: envelope, errors, backoff, SQS rules
  ['client'], // JobClient, for producers
  ['runtime'], // code that runs in Lambda
  // lib/index.ts (`sqs-jobs`, the runtime's entry point) and lib/worker.ts (`sqs-jobs/worker`, its
  // lean entry); CDK constructs; the local runtime; operations on queues
  ['index.ts', 'worker.ts', 'constructs', 'local', 'ops'],
  ['console', 'sample'], // the web console; the sample app
  // the sqs-jobs command; the deployable sample stack; the package build; the test kit
  // (`sqs-jobs/testing`, for users' tests: nothing in lib/ imports it)
  ['cli', 'stacks', 'build', 'testing'],
];

/** `^lib/(a|b)(/|$)`: the modules of these folders of lib/ (or lib/index.ts). */
function under(folders) {
  return `^lib/(${folders.map((f) => f.replace('.', '\\.')).join('|')})(/|$)`;
}

const layerRules = LAYERS.flatMap((layer, rank) =>
  layer.map((folder) => ({
    name: `layer-${folder}`,
    comment: `lib/${folder} imports only lower layers (${LAYERS.slice(0, rank).flat().join(', ') || 'none'}): see LAYERS in .dependency-cruiser.cjs`,
    severity: 'error',
    from: { path: under([folder]) },
    to: {
      path: under(
        LAYERS.slice(rank)
          .flat()
          .filter((other) => other !== folder),
      ),
    },
  })),
);

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'constructs-not-runtime',
      comment: 'the CDK constructs never import the Lambda runtime (DESIGN.md, Layout)',
      severity: 'error',
      from: { path: '^lib/constructs/' },
      to: { path: ['^lib/runtime/', '^lib/index\\.ts$'] },
    },
    {
      name: 'runtime-not-cdk',
      comment: 'code that runs in Lambda (and the client it shares code with) never imports the CDK',
      severity: 'error',
      from: { path: '^lib/(core|client|runtime)/' },
      to: { path: '(^|/)node_modules/(aws-cdk-lib|constructs|cdk-nag)/' },
    },
    {
      name: 'business-logic-not-runtime',
      comment:
        "a job's business logic imports `sqs-jobs`, never Middy, the runtime's SQS client or the runtime's internals (DESIGN.md)",
      severity: 'error',
      from: { path: '^lib/sample/(jobs|hold-jobs|domain|external-api)\\.ts$' },
      to: {
        path: ['(^|/)node_modules/(@middy|@aws-sdk/client-sqs)/', '^lib/(runtime|core|client)/'],
      },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that resolves to nothing (a typo, or a package not installed)',
      severity: 'error',
      // The console page's vendor files are written at build time, not in the tree.
      from: { path: '^lib/', pathNot: '^lib/console/page/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Package subpaths (`hono/cookie`) resolve through their `exports`, as Node does.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'types', 'default'],
    },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|cdk\\.out)/' },
  },
};
