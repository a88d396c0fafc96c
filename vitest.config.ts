import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The package's own name resolves to its sources, as tsconfig.json's `paths` say (the sample
 * imports it by name, as users do; tsx and esbuild read those paths themselves).
 */
const SELF_ENTRIES: Record<string, string> = {
  'sqs-jobs': './lib/index.ts',
  'sqs-jobs/worker': './lib/worker.ts',
  'sqs-jobs/client': './lib/client/index.ts',
  'sqs-jobs/cdk': './lib/constructs/index.ts',
  'sqs-jobs/ops': './lib/ops/index.ts',
  'sqs-jobs/testing': './lib/testing/index.ts',
};
const selfAlias = Object.entries(SELF_ENTRIES).map(([name, file]) => ({
  find: new RegExp(`^${name}$`),
  replacement: fileURLToPath(new URL(file, import.meta.url)),
}));

export default defineConfig({
  resolve: { alias: selfAlias },
  test: {
    // test/conformance needs moto server: its own command (npm run test:conformance).
    include: ['test/{unit,integration,infra}/**/*.test.ts'],
    setupFiles: ['test/support/cdk-outdir.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration and infra tests start emulators or synthesize: keep them from starving each other on 2 cores.
    maxWorkers: 2,
  },
});
