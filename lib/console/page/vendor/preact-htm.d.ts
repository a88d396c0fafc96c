/**
 * Types of /vendor/preact-htm.js, the UI library the console serves (htm's one-file Preact
 * build, node_modules/htm/preact/standalone.module.js: lib/console/assets.ts). htm's own
 * declarations need the `preact` package, which is bundled into that file and not installed, so
 * the part the page uses is declared here, after Preact 10's hooks.
 */

/** A rendered tree (opaque to the page). */
export interface VNode {
  readonly type: unknown;
  readonly props: unknown;
}

/** Element tree from a tagged template: `html\`<div class=${c}>${child}</div>\``; components as `<${Component} prop=${v} />`. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): VNode;

/** Renders `tree` into `parent` (replacing what it rendered there before). */
export function render(tree: VNode, parent: object | null): void;

/** A state value and its setter (a value, or a function of the previous value). */
export function useState<T>(initial: T | (() => T)): [T, (next: T | ((previous: T) => T)) => void];

/** Runs `effect` after a render in which one of `inputs` changed (every render without them); its result cleans up. */
export function useEffect(effect: () => undefined | (() => void), inputs?: readonly unknown[]): void;

/** A mutable box kept across renders (`ref=${box}` on an element puts the element in it). */
export function useRef<T>(initial: T): { current: T };

/** `callback`, the same function until one of `inputs` changes. */
export function useCallback<T extends (...args: never[]) => unknown>(
  callback: T,
  inputs: readonly unknown[],
): T;
