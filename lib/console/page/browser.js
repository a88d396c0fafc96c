// The browser's globals, typed (./types.ts `Browser`): the project's tsconfig has no DOM lib, so
// the page takes `document`, `location`, `history` and the window's events from here.
/** @import { Browser } from './types.ts' */

/** The window. */
export const browser = /** @type {Browser} */ (/** @type {unknown} */ (globalThis));
export const { document, location, history } = browser;
