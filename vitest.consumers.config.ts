import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The consumer suite (test/consumers): the packed tarball installed into the projects of
 * examples/ and proven there (types, synth, bundles, producers on the local runtime, publint,
 * attw, publish dry run). Slow (npm pack and installs): its own command, not part of npm test.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/consumers/*.test.ts'],
    globalSetup: ['test/consumers/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // A fork that ran the local runtime and large bundles can take a while to exit on a busy machine.
    teardownTimeout: 60_000,
  },
});
