/**
 * `npm run build` (also run by `npm pack` / `npm publish` through `prepack`): the published
 * package in dist/ (lib/build/package.ts: the library by tsc, the `sqs-jobs` CLI bundled by
 * esbuild, the console's page). Exit code: 0 built, else tsc's; a failed bundle throws (1).
 */
import { buildPackage } from '../lib/build/package.ts';

process.exitCode = await buildPackage(new URL('../', import.meta.url));
