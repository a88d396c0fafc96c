import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The browser suite (test/browser): the web console driven in Chromium by playwright-core, using
 * the system browser (Debian's `chromium`, /usr/bin/chromium; SQS_JOBS_CHROMIUM overrides), never a
 * downloaded one. Its own command (npm run test:browser), so `npm test` needs no browser.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // One stack, one browser: the tests of a file share them and run in order.
    fileParallelism: false,
  },
});
