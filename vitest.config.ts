import { defineConfig } from 'vitest/config';

export default defineConfig({
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
