/**
 * `sqs-jobs local --watch`: rebuild the functions when their code changes, as `cdk watch` users
 * expect, without losing queued jobs. It watches what the assembly is built from (synth.ts
 * `sourcePaths`: cdk.json's `watch.include` directories, else the project, and the project files),
 * and on a change synthesizes again through the path the local runtime starts with
 * (`ensureSynthesized`: it synthesizes only when the assembly is stale), then reloads the functions
 * whose code changed (`LocalRuntime.reloadFunctions`). The emulators, queues, tables and their
 * messages are never touched: a job waiting in a queue runs on the new code.
 */
import { type FSWatcher, watch } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { LocalRuntime } from './runtime/api.ts';
import type { StartBeside } from './serve.ts';
import { type EnsureSynthesizedOptions, ensureSynthesized, sourcePaths } from './synth.ts';

/** One rebuild, as reported by {@link watchFunctionCode}. */
export interface CodeReload {
  /** Whether a synth ran (false: the assembly was already up to date, nothing reloaded). */
  readonly synthesized: boolean;
  /** Logical ids of the functions now running new code. */
  readonly functions: readonly string[];
  /** Synth and reload time, in milliseconds. */
  readonly durationMs: number;
}

/** Options of {@link watchFunctionCode}. */
export interface WatchFunctionCodeOptions {
  /** The CDK app (holds cdk.json). */
  readonly projectRoot: string;
  /** The cloud assembly the runtime was started from. */
  readonly assemblyDir: string;
  /** How to synthesize (as `startLocalRuntime`'s `synthesizer`). @default ensureSynthesized's */
  readonly synthesize?: EnsureSynthesizedOptions['synthesize'];
  /** After each rebuild. */
  readonly onReload: (reload: CodeReload) => void;
  /** A synth or reload that failed; the watch goes on (the functions keep their code). */
  readonly onError: (error: unknown) => void;
  /** Changes closer together than this make one rebuild, in milliseconds. @default 200 */
  readonly settleMs?: number;
}

/** Directories whose changes are never the app's sources (output, dependencies, VCS). */
const IGNORED = /(^|[\\/])(node_modules|cdk\.out|\.git)([\\/]|$)/;

/**
 * Watches the app's sources and rebuilds on change (see the module docs). Rebuilds never overlap:
 * changes during one make one more afterwards.
 * @returns `close()`, which stops watching (a rebuild under way still finishes).
 */
export function watchFunctionCode(rt: LocalRuntime, options: WatchFunctionCodeOptions): { close(): void } {
  const root = resolve(options.projectRoot);
  const assembly = resolve(options.assemblyDir);
  const { dirs, files } = sourcePaths(root);
  const watched = new Set([...dirs.map((d) => resolve(root, d)), ...files.map((f) => resolve(root, f))]);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const rebuild = async (): Promise<void> => {
    const started = performance.now();
    try {
      const synth = await ensureSynthesized({
        projectRoot: root,
        outdir: assembly,
        ...(options.synthesize ? { synthesize: options.synthesize } : {}),
      });
      const functions = synth.synthesized ? rt.reloadFunctions() : [];
      options.onReload({
        synthesized: synth.synthesized,
        functions,
        durationMs: performance.now() - started,
      });
    } catch (error) {
      options.onError(error);
    }
  };
  const schedule = (): void => {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (running !== undefined) {
        again = true;
        return;
      }
      running = (async () => {
        do {
          again = false;
          await rebuild();
        } while (again && !closed);
        running = undefined;
      })();
    }, options.settleMs ?? 200);
  };

  const watchers: FSWatcher[] = [];
  for (const path of watched) {
    try {
      watchers.push(
        watch(path, { recursive: true, persistent: false }, (_event, name) => {
          const changed = name === null ? path : join(path, name.toString());
          if (changed.startsWith(assembly + sep) || IGNORED.test(changed.slice(root.length))) return;
          schedule();
        }),
      );
    } catch (error) {
      // A source path that does not exist (a project file it does not have) has nothing to watch.
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    }
  }
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
}

/**
 * {@link watchFunctionCode} as something served beside a running stack (serve.ts): it adds
 * `watch: { dirs }` to the `--json` description and a line naming what it watches to the text,
 * and stops watching when the stack stops.
 */
export function watchBeside(options: WatchFunctionCodeOptions): StartBeside {
  return async (rt) => {
    const watcher = watchFunctionCode(rt, options);
    const { dirs } = sourcePaths(resolve(options.projectRoot));
    return {
      json: { watch: { dirs } },
      text: [
        `Watching ${dirs.join(', ')} (cdk.json watch.include): a change synthesizes and reloads the functions; queued jobs stay.`,
      ],
      async close() {
        watcher.close();
      },
    };
  };
}
