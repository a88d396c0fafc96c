/**
 * Errors of the local runtime (lib/local). One base class, {@link LocalRuntimeError}; each
 * subclass sets `name`, carries `cause` when it wraps another failure, and `context` with the
 * facts needed to act on it (logical id, resource type, template path, endpoint...).
 */

/** Base class of every error the local runtime throws. */
export class LocalRuntimeError extends Error {
  /** Extra facts: logical ids, resource types, template paths, endpoints. */
  readonly context: Readonly<Record<string, unknown>>;

  constructor(message: string, options?: { cause?: unknown; context?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.context = options?.context ?? {};
  }
}

/** The cloud assembly (cdk.out) is missing, unreadable, or does not hold the expected stack. */
export class CloudAssemblyError extends LocalRuntimeError {}

/** Synthesis of the CDK app failed. */
export class SynthError extends LocalRuntimeError {}

/**
 * A template value could not be resolved: a reference to an unknown resource or parameter, a
 * malformed intrinsic, an attribute with no local value. `context.path` is the template path
 * (e.g. `Resources.MyQueue.Properties.RedrivePolicy`).
 */
export class TemplateResolutionError extends LocalRuntimeError {}

/**
 * The template uses an intrinsic function the local runtime does not implement (e.g.
 * `Fn::ImportValue`, `Fn::Cidr`). `context.intrinsic` names it, `context.path` says where.
 */
export class UnsupportedIntrinsicError extends TemplateResolutionError {}

/** Creating a queue or table on the emulator failed. */
export class ProvisionError extends LocalRuntimeError {}

/** A function's template definition cannot run locally (non-Node runtime, container image...). */
export class UnsupportedFunctionError extends LocalRuntimeError {}

/** `waitUntilDrained` ran out of time; `context.depths` holds the last depths seen. */
export class DrainTimeoutError extends LocalRuntimeError {}
