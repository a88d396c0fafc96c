/**
 * The functions the local runtime runs: those with at least one event source mapping, resolved
 * once each from the template (function-config.ts), found by selector (logical id, function
 * name, or the `JOBS_QUEUE_NAME` of their environment), each with its complete environment.
 */
import type { AssemblyStack } from '../cloud-assembly.ts';
import type { Endpoints } from '../emulators.ts';
import { LocalRuntimeError } from '../errors.ts';
import {
  type FunctionDefinition,
  functionEnvironment,
  type LocalCredentials,
  resolveFunction,
} from '../function-config.ts';
import type { ProvisionedStack } from '../provision/stack.ts';
import type { LocalRuntimeOptions } from './options.ts';

/** `JOBS_QUEUE_NAME` of a function's template environment (a sqs-jobs worker's queue name). */
export function jobQueueNameOf(fn: FunctionDefinition): string | undefined {
  return fn.templateEnvironment.JOBS_QUEUE_NAME;
}

/** Whether `selector` names `fn`: its logical id, function name or `JOBS_QUEUE_NAME`. */
export function matchesFunction(fn: FunctionDefinition, selector: string): boolean {
  return fn.logicalId === selector || fn.name === selector || jobQueueNameOf(fn) === selector;
}

/** The mapped functions of a provisioned stack, in the order of their first mapping. */
export class MappedFunctions {
  private readonly byLogicalId = new Map<string, FunctionDefinition>();

  /**
   * @throws {UnsupportedFunctionError} when a mapped function cannot run locally.
   * @throws {TemplateResolutionError} when one of its properties cannot resolve.
   */
  constructor(stack: AssemblyStack, provisioned: ProvisionedStack) {
    for (const m of provisioned.eventSourceMappings) {
      if (this.byLogicalId.has(m.functionLogicalId)) continue;
      const fn = provisioned.functions.find((f) => f.logicalId === m.functionLogicalId);
      if (fn) this.byLogicalId.set(fn.logicalId, resolveFunction(stack, provisioned.resolver, fn));
    }
  }

  /** Every mapped function. */
  all(): FunctionDefinition[] {
    return [...this.byLogicalId.values()];
  }

  /** A function by logical id; undefined when it has no mapping. */
  byId(logicalId: string): FunctionDefinition | undefined {
    return this.byLogicalId.get(logicalId);
  }

  /** A function by selector (see {@link matchesFunction}). @throws {LocalRuntimeError} when none matches. */
  find(selector: string): FunctionDefinition {
    const found = this.all().find((fn) => matchesFunction(fn, selector));
    if (!found) {
      throw new LocalRuntimeError(
        `no mapped function matches ${JSON.stringify(selector)} (logical id, function name or JOBS_QUEUE_NAME); known: ${this.all()
          .map((f) => f.logicalId)
          .join(', ')}`,
        { context: { selector } },
      );
    }
    return found;
  }
}

/** Where the functions' environments point. */
export interface EnvironmentTarget {
  readonly region: string;
  /** The endpoints in use (the proxies'), and the local Scheduler's. */
  readonly endpoints: Endpoints & { readonly scheduler?: string };
  readonly credentials: LocalCredentials;
  /** What the local tracing adds (the X-Ray daemon address). */
  readonly tracingEnvironment: Readonly<Record<string, string>>;
}

/**
 * The complete environment of each function by logical id: Lambda's variables and the template's
 * (see {@link functionEnvironment}), then the tracing's, `options.environment`, and the
 * `options.functionEnvironment` entries whose selector matches the function, later winning.
 * @throws {LocalRuntimeError} when a key of `options.functionEnvironment` matches no mapped function.
 */
export function functionEnvironments(
  functions: MappedFunctions,
  options: Pick<LocalRuntimeOptions, 'environment' | 'functionEnvironment'>,
  target: EnvironmentTarget,
): Map<string, Record<string, string>> {
  for (const key of Object.keys(options.functionEnvironment ?? {})) functions.find(key);
  const envs = new Map<string, Record<string, string>>();
  for (const fn of functions.all()) {
    const overrides = { ...options.environment };
    for (const [key, vars] of Object.entries(options.functionEnvironment ?? {})) {
      if (matchesFunction(fn, key)) Object.assign(overrides, vars);
    }
    envs.set(
      fn.logicalId,
      functionEnvironment({
        fn,
        region: target.region,
        endpoints: target.endpoints,
        credentials: target.credentials,
        overrides: { ...target.tracingEnvironment, ...overrides },
      }),
    );
  }
  return envs;
}
