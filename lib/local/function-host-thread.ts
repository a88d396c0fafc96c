/**
 * Entry point of one Lambda execution environment: a worker thread with its own `process.env`
 * that loads the function's bundled handler from the cloud assembly, then runs invocations one
 * at a time on request of {@link FunctionHost} (function-host.ts).
 *
 * Module loading follows the Lambda Node.js runtime ("Define Lambda function handler in
 * Node.js", "CommonJS and ES Modules"): handler `dir/file.export` → `<asset>/dir/file` with `.js`,
 * `.mjs` or `.cjs`; `.mjs` is an ES module, `.cjs` CommonJS, and `.js` is CommonJS unless a
 * package.json inside the asset says `"type": "module"`. The asset directory sits inside the
 * project, whose own package.json says `"type": "module"`; a hook keeps that from turning the
 * bundle into an ES module. Bare imports the bundle leaves external (NodejsFunction leaves out
 * `@aws-sdk/*`, which the Lambda runtime provides) resolve from the project's node_modules.
 *
 * Stack traces name the user's source files: source maps are on, and each bundle of the asset is
 * loaded with its map inlined and pointed at the project's files (source-maps.ts).
 *
 * Runs with Node's built-in type stripping: erasable TypeScript only.
 */
import { subscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { FAULT_HEADER, KILL_CALLER_VALUE, KILLED_EXIT_CODE } from './faults.ts';
import { createLambdaContext } from './lambda-context.ts';
import { withLocalSourceMap } from './source-maps.ts';

/** `workerData` of the thread. */
export interface FunctionThreadData {
  readonly assetDir: string;
  /** Handler string of the template, e.g. `index.handler`. */
  readonly handler: string;
  /** Directory whose node_modules provide modules the Lambda runtime would (`@aws-sdk/*`). */
  readonly projectRoot: string;
  readonly functionName: string;
  readonly invokedFunctionArn: string;
  readonly memorySizeMb: number;
  readonly logStreamName: string;
  /**
   * Fault injection: when a `fetch` response carries `x-sqs-jobs-fault: kill-caller` (faults.ts),
   * the environment dies at once (exit code 137), as a Lambda whose process is killed right after
   * a call's side effect. @default false
   */
  readonly killOnFaultHeader?: boolean;
  /** Map stack traces to the sources (see {@link FunctionHostOptions.sourceMaps}). @default false */
  readonly sourceMaps?: boolean;
}

/** Host → thread. */
export interface InvokeMessage {
  readonly type: 'invoke';
  readonly id: number;
  readonly event: unknown;
  readonly awsRequestId: string;
  readonly deadlineMs: number;
  /** `_X_AMZN_TRACE_ID` of this invocation, as Lambda sets it (xray.ts); unset when absent. */
  readonly traceHeader?: string;
}

/** A failure as Lambda reports it (`errorType`, `errorMessage`, `stackTrace`). */
export interface ThreadError {
  readonly errorType: string;
  readonly errorMessage: string;
  readonly stack?: string;
}

/** Thread → host. */
export type ThreadMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'init-error'; readonly error: ThreadError }
  /** An uncaught exception or unhandled rejection: the environment is finished. */
  | { readonly type: 'crash'; readonly error: ThreadError }
  /** Killed on a fault header (`killOnFaultHeader`); the thread exits right after this message. */
  | { readonly type: 'killed'; readonly error: ThreadError }
  | { readonly type: 'result'; readonly id: number; readonly ok: true; readonly payload: unknown }
  | { readonly type: 'result'; readonly id: number; readonly ok: false; readonly error: ThreadError };

const data = workerData as FunctionThreadData;
const port = parentPort;
const assetRoot = resolve(data.assetDir);
const RUNTIME_PROVIDED = /^@aws-sdk\//;

function toThreadError(error: unknown, fallbackType = 'Error'): ThreadError {
  if (error instanceof Error) {
    return { errorType: error.name || fallbackType, errorMessage: error.message, stack: error.stack };
  }
  return { errorType: fallbackType, errorMessage: String(error) };
}

function insideAsset(file: string): boolean {
  const rel = relative(assetRoot, file);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep) && !rel.includes(`..${sep}`);
}

/** The `type` of the nearest package.json between the file and the asset root; undefined when none. */
function assetPackageType(file: string): string | undefined {
  let dir = dirname(file);
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: string }).type ?? 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (dir === assetRoot || !insideAsset(dir)) return undefined;
    dir = dirname(dir);
  }
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const parent = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : undefined;
      if (RUNTIME_PROVIDED.test(specifier) && parent !== undefined && insideAsset(parent)) {
        return nextResolve(specifier, {
          ...context,
          parentURL: pathToFileURL(join(data.projectRoot, 'package.json')).href,
        });
      }
      throw error;
    }
  },
  load(url, context, nextLoad) {
    const file = url.startsWith('file:') ? fileURLToPath(url) : undefined;
    if (file === undefined || !insideAsset(file) || !/\.[cm]?js$/.test(file)) return nextLoad(url, context);
    if (file.endsWith('.js') && assetPackageType(file) !== 'module') {
      const text = readFileSync(file, 'utf8');
      const source = data.sourceMaps ? withLocalSourceMap(file, text, data.projectRoot) : text;
      return { format: 'commonjs', source, shortCircuit: true };
    }
    const loaded = nextLoad(url, context);
    if (!data.sourceMaps || loaded.source === undefined || loaded.source === null) return loaded;
    const text = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source);
    return { ...loaded, source: withLocalSourceMap(file, text, data.projectRoot) };
  },
});

type Handler = (event: unknown, context: unknown) => unknown;

async function loadHandler(): Promise<Handler> {
  const handler = data.handler;
  const slash = handler.lastIndexOf('/');
  const dot = handler.indexOf('.', slash + 1);
  if (dot <= slash + 1) {
    throw Object.assign(new Error(`Bad handler ${handler}: expected <module>.<export>`), {
      name: 'Runtime.MalformedHandlerName',
    });
  }
  const modulePath = handler.slice(0, dot);
  const exportPath = handler.slice(dot + 1).split('.');
  const base = join(assetRoot, modulePath);
  const file = ['.js', '.mjs', '.cjs'].map((ext) => base + ext).find((f) => existsSync(f));
  if (file === undefined) {
    throw Object.assign(new Error(`Cannot find module '${modulePath}' in ${assetRoot}`), {
      name: 'Runtime.ImportModuleError',
    });
  }
  const esm = file.endsWith('.mjs') || (file.endsWith('.js') && assetPackageType(file) === 'module');
  let mod: unknown;
  try {
    mod = esm ? await import(pathToFileURL(file).href) : createRequire(file)(file);
  } catch (cause) {
    throw Object.assign(new Error(`Error loading ${file}: ${(cause as Error).message}`, { cause }), {
      name: 'Runtime.ImportModuleError',
    });
  }
  const fn = exportPath.reduce<unknown>(
    (obj, key) => (obj as Record<string, unknown> | undefined)?.[key],
    mod,
  );
  if (typeof fn !== 'function') {
    throw Object.assign(new Error(`${handler} is undefined or not exported`), {
      name: 'Runtime.HandlerNotFound',
    });
  }
  return fn as Handler;
}

/**
 * Kills the environment when a `fetch` response (undici, Node's fetch) carries the kill header:
 * the message is posted first (it is delivered before the exit), then the thread exits without
 * running another line of the handler, so the call's side effect is done and nothing after it.
 */
function killOnFaultHeader(port: NonNullable<typeof parentPort>): void {
  subscribe('undici:request:headers', (message) => {
    const { request, response } = message as {
      request?: { origin?: unknown; path?: unknown };
      response?: { headers?: readonly (Buffer | string)[] };
    };
    const headers = response?.headers ?? [];
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (
        String(headers[i]).toLowerCase() === FAULT_HEADER &&
        String(headers[i + 1]).trim() === KILL_CALLER_VALUE
      ) {
        port.postMessage({
          type: 'killed',
          error: {
            errorType: 'Runtime.ExitError',
            errorMessage: `execution environment killed (fault injection) after ${String(request?.origin ?? '')}${String(request?.path ?? '')} answered ${FAULT_HEADER}: ${KILL_CALLER_VALUE}`,
          },
        } satisfies ThreadMessage);
        process.exit(KILLED_EXIT_CODE);
      }
    }
  });
}

async function main(): Promise<void> {
  if (port === null) throw new Error('function-host-thread must run in a worker thread');
  if (data.killOnFaultHeader) killOnFaultHeader(port);
  // When asked (the dev loop), whatever the function's NODE_OPTIONS says: traces name the sources.
  if (data.sourceMaps) process.setSourceMapsEnabled(true);
  // Reported through the port, after any result already posted: an answer given before a crash
  // stands (Lambda has sent it), and the host discards the environment when the crash arrives.
  process.on('uncaughtException', (error) => {
    port.postMessage({
      type: 'crash',
      error: toThreadError(error, 'Runtime.UncaughtException'),
    } satisfies ThreadMessage);
  });
  let handler: Handler;
  try {
    handler = await loadHandler();
  } catch (error) {
    port.postMessage({ type: 'init-error', error: toThreadError(error) } satisfies ThreadMessage);
    return;
  }
  port.on('message', async (message: InvokeMessage) => {
    if (message.type !== 'invoke') return;
    // Lambda sets the trace header per invocation; the AWS SDK and Powertools read it from here.
    if (message.traceHeader === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = message.traceHeader;
    const context = createLambdaContext({
      functionName: data.functionName,
      invokedFunctionArn: data.invokedFunctionArn,
      memorySizeMb: data.memorySizeMb,
      awsRequestId: message.awsRequestId,
      logStreamName: data.logStreamName,
      deadlineMs: message.deadlineMs,
    });
    let reply: ThreadMessage;
    try {
      const result = await handler(message.event, context);
      // Lambda returns the JSON serialisation of the result; undefined becomes null.
      const payload = result === undefined ? null : JSON.parse(JSON.stringify(result));
      reply = { type: 'result', id: message.id, ok: true, payload };
    } catch (error) {
      reply = { type: 'result', id: message.id, ok: false, error: toThreadError(error) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ type: 'ready' } satisfies ThreadMessage);
}

await main();
