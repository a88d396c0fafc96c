import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/** Conformance runs against a second, independent emulator (moto server); see test/conformance. */
export default defineConfig({ ...base, test: { ...base.test, include: ['test/conformance/**/*.test.ts'] } });
