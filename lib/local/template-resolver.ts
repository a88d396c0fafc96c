/**
 * Resolves CloudFormation intrinsic functions in a synthesized template, so the local runtime
 * builds queues, tables and function environments from the same template that deploys.
 *
 * Implemented (CloudFormation User Guide, "Intrinsic function reference" and "Pseudo parameters
 * reference"): `Ref` (resources, parameters, pseudo parameters `AWS::Region`, `AWS::AccountId`,
 * `AWS::Partition`, `AWS::StackName`, `AWS::StackId`, `AWS::URLSuffix`, `AWS::NoValue`,
 * `AWS::NotificationARNs`), `Fn::GetAtt` (list and `"Id.Attr"` forms), `Fn::Join`, `Fn::Sub`
 * (string and `[string, vars]` forms, `${!Literal}` escapes), `Fn::Select`, `Fn::Split`,
 * `Fn::If` with `Conditions` (`Fn::Equals`, `Fn::And`, `Fn::Or`, `Fn::Not`, `Condition`),
 * `Fn::FindInMap`, `Fn::GetAZs`, `Fn::Base64`, `Fn::ToJsonString`, `Fn::Length`.
 * Anything else that starts with `Fn::` throws {@link UnsupportedIntrinsicError} naming the
 * function and the template path.
 *
 * Resource values (what `Ref` and `Fn::GetAtt` of a resource return) come from a
 * {@link ResourceValues} callback supplied by the provisioner, because they only exist once the
 * resource was created on the emulator. The order in which resources are created is
 * provision/order.ts's.
 *
 * Over 400 lines and kept whole: it is one recursive evaluator, whose intrinsic functions and
 * conditions call back into `resolve` and share its path-naming errors; split, each piece would
 * need the whole class anyway.
 */

import { shownValue } from '../core/shown-value.ts';
import { TemplateResolutionError, UnsupportedIntrinsicError } from './errors.ts';

/** A CloudFormation template, as far as the local runtime reads it. */
export interface CfnTemplate {
  readonly Resources: Readonly<Record<string, CfnResource>>;
  readonly Outputs?: Readonly<Record<string, CfnOutput>>;
  readonly Parameters?: Readonly<Record<string, CfnParameter>>;
  readonly Conditions?: Readonly<Record<string, unknown>>;
  readonly Mappings?: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, unknown>>>>>>;
}

/** One resource of a template. */
export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly DependsOn?: string | readonly string[];
  readonly Condition?: string;
  readonly Metadata?: Readonly<Record<string, unknown>>;
}

/** One output of a template. */
export interface CfnOutput {
  readonly Value: unknown;
  readonly Description?: string;
  readonly Condition?: string;
  readonly Export?: { readonly Name: unknown };
}

/** One parameter of a template. */
export interface CfnParameter {
  readonly Type: string;
  readonly Default?: unknown;
}

/** Values of the pseudo parameters (`AWS::Region`...). */
export interface PseudoParameters {
  /** `AWS::Region`, e.g. `us-east-1`. */
  readonly region: string;
  /** `AWS::AccountId`, 12 digits. */
  readonly accountId: string;
  /** `AWS::Partition`. @default 'aws' */
  readonly partition?: string;
  /** `AWS::StackName`. */
  readonly stackName: string;
  /** `AWS::URLSuffix`. @default 'amazonaws.com' */
  readonly urlSuffix?: string;
}

/**
 * What `Ref` / `Fn::GetAtt` of a resource return. `attribute` is undefined for `Ref`.
 * Throw {@link TemplateResolutionError} when the value does not exist (yet).
 */
export type ResourceValues = (logicalId: string, attribute: string | undefined, path: string) => unknown;

/** Marker for `Ref: AWS::NoValue`: the property is removed from its object or list. */
export const NO_VALUE: unique symbol = Symbol('AWS::NoValue');

/** Options of {@link TemplateResolver}. */
export interface TemplateResolverOptions {
  /** Pseudo parameter values; a function is read at each use (the account may be learnt late). */
  readonly pseudo: PseudoParameters | (() => PseudoParameters);
  /** Parameter values that win over the template's `Default`s. Lists as arrays or comma-joined strings. */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** Values of resources for `Ref` and `Fn::GetAtt`. */
  readonly resourceValues: ResourceValues;
}

type Json = unknown;

const PSEUDO_PREFIX = 'AWS::';

/** Resolves intrinsic functions of one template. Stateless apart from memoised conditions. */
export class TemplateResolver {
  private readonly template: CfnTemplate;
  private readonly options: TemplateResolverOptions;
  private readonly conditionCache = new Map<string, boolean>();
  private readonly evaluating = new Set<string>();

  constructor(template: CfnTemplate, options: TemplateResolverOptions) {
    if (template === null || typeof template !== 'object' || typeof template.Resources !== 'object') {
      throw new TemplateResolutionError('template has no Resources section', {
        context: { path: 'Resources' },
      });
    }
    this.template = template;
    this.options = options;
  }

  /** The pseudo parameters in use now. */
  get pseudo(): Required<PseudoParameters> {
    const p = typeof this.options.pseudo === 'function' ? this.options.pseudo() : this.options.pseudo;
    return { partition: 'aws', urlSuffix: 'amazonaws.com', ...p };
  }

  /**
   * Resolves every intrinsic function inside `value`.
   * @param path where the value sits in the template, for error messages
   *   (e.g. `Resources.Fn.Properties.Environment`).
   * @returns the plain JSON value; `NO_VALUE` when the whole value is `Ref: AWS::NoValue`.
   * @throws {UnsupportedIntrinsicError} for an intrinsic function this resolver does not support.
   * @throws {TemplateResolutionError} for a malformed intrinsic or an unknown reference.
   */
  resolve(value: Json, path: string): Json {
    if (Array.isArray(value)) {
      const out: Json[] = [];
      value.forEach((item, i) => {
        const r = this.resolve(item, `${path}[${i}]`);
        if (r !== NO_VALUE) out.push(r);
      });
      return out;
    }
    if (value === null || typeof value !== 'object') return value;
    const record = value as Record<string, Json>;
    const keys = Object.keys(record);
    const key = keys[0];
    if (keys.length === 1 && key !== undefined && (key === 'Ref' || key.startsWith('Fn::'))) {
      return this.intrinsic(key, record[key], `${path}.${key}`);
    }
    const out: Record<string, Json> = {};
    for (const k of keys) {
      const r = this.resolve(record[k], `${path}.${k}`);
      if (r !== NO_VALUE) out[k] = r;
    }
    return out;
  }

  /** Resolves `value` and requires a string (numbers and booleans are converted as CloudFormation does). */
  resolveString(value: Json, path: string): string {
    return toStr(this.resolve(value, path), path);
  }

  /**
   * Whether a named condition of the template's `Conditions` section holds.
   * @throws {TemplateResolutionError} when it does not exist or refers to itself.
   */
  condition(name: string, path = `Conditions.${name}`): boolean {
    const cached = this.conditionCache.get(name);
    if (cached !== undefined) return cached;
    const definition = this.template.Conditions?.[name];
    if (definition === undefined) {
      throw new TemplateResolutionError(`unknown condition ${JSON.stringify(name)} at ${path}`, {
        context: { path, condition: name },
      });
    }
    if (this.evaluating.has(name)) {
      throw new TemplateResolutionError(`condition ${name} refers to itself`, { context: { path } });
    }
    this.evaluating.add(name);
    try {
      const result = this.evaluateCondition(definition, `Conditions.${name}`);
      this.conditionCache.set(name, result);
      return result;
    } finally {
      this.evaluating.delete(name);
    }
  }

  /** Whether a resource (or output) with this `Condition` exists; true when it has none. */
  isIncluded(conditionName: string | undefined, path: string): boolean {
    return conditionName === undefined ? true : this.condition(conditionName, path);
  }

  /** The value of a template parameter: the override, else its `Default`. */
  parameter(name: string, path: string): Json {
    const definition = this.template.Parameters?.[name];
    if (definition === undefined) {
      throw new TemplateResolutionError(`unknown parameter ${name} at ${path}`, { context: { path, name } });
    }
    const override = this.options.parameters?.[name];
    const value = override !== undefined ? override : definition.Default;
    if (value === undefined) {
      throw new TemplateResolutionError(
        `parameter ${name} has no Default; pass it in the local runtime's parameters option (at ${path})`,
        { context: { path, name } },
      );
    }
    if (definition.Type.startsWith('List<') || definition.Type === 'CommaDelimitedList') {
      return Array.isArray(value) ? value.map(String) : String(value).split(',');
    }
    return Array.isArray(value) ? value.join(',') : String(value);
  }

  private ref(target: Json, path: string): Json {
    if (typeof target !== 'string') {
      throw new TemplateResolutionError(`Ref needs a string at ${path}`, { context: { path } });
    }
    if (target.startsWith(PSEUDO_PREFIX)) return this.pseudoParameter(target, path);
    if (this.template.Parameters?.[target] !== undefined) return this.parameter(target, path);
    this.requireResource(target, path);
    return this.options.resourceValues(target, undefined, path);
  }

  private pseudoParameter(name: string, path: string): Json {
    const p = this.pseudo;
    switch (name) {
      case 'AWS::Region':
        return p.region;
      case 'AWS::AccountId':
        return p.accountId;
      case 'AWS::Partition':
        return p.partition;
      case 'AWS::StackName':
        return p.stackName;
      case 'AWS::StackId':
        return `arn:${p.partition}:cloudformation:${p.region}:${p.accountId}:stack/${p.stackName}/00000000-0000-4000-8000-000000000000`;
      case 'AWS::URLSuffix':
        return p.urlSuffix;
      case 'AWS::NoValue':
        return NO_VALUE;
      case 'AWS::NotificationARNs':
        return [];
      default:
        throw new TemplateResolutionError(`unknown pseudo parameter ${name} at ${path}`, {
          context: { path },
        });
    }
  }

  private requireResource(logicalId: string, path: string): void {
    if (this.template.Resources[logicalId] === undefined) {
      throw new TemplateResolutionError(`reference to unknown resource ${logicalId} at ${path}`, {
        context: { path, logicalId },
      });
    }
  }

  private getAtt(args: Json, path: string): Json {
    let logicalId: string;
    let attribute: string;
    if (typeof args === 'string') {
      const dot = args.indexOf('.');
      if (dot <= 0) throw malformed('Fn::GetAtt', path, 'expected "LogicalId.Attribute"');
      logicalId = args.slice(0, dot);
      attribute = args.slice(dot + 1);
    } else if (Array.isArray(args) && args.length === 2 && typeof args[0] === 'string') {
      logicalId = args[0];
      attribute = toStr(this.resolve(args[1], `${path}[1]`), `${path}[1]`);
    } else {
      throw malformed('Fn::GetAtt', path, 'expected [LogicalId, Attribute]');
    }
    this.requireResource(logicalId, path);
    return this.options.resourceValues(logicalId, attribute, path);
  }

  private sub(args: Json, path: string): Json {
    let text: Json;
    let vars: Record<string, Json> = {};
    if (typeof args === 'string') {
      text = args;
    } else if (Array.isArray(args) && args.length === 2 && typeof args[0] === 'string') {
      text = args[0];
      const map = args[1];
      if (map === null || typeof map !== 'object' || Array.isArray(map)) {
        throw malformed('Fn::Sub', path, 'the second element must be a map of variables');
      }
      vars = map as Record<string, Json>;
    } else {
      throw malformed('Fn::Sub', path, 'expected a string or [string, variables]');
    }
    return (text as string).replace(/\$\{([^}]*)\}/g, (_match, rawName: string) => {
      if (rawName.startsWith('!')) return `\${${rawName.slice(1)}}`;
      const name = rawName.trim();
      if (Object.hasOwn(vars, name)) return toStr(this.resolve(vars[name], `${path}.${name}`), path);
      if (name.startsWith(PSEUDO_PREFIX) || this.template.Parameters?.[name] !== undefined) {
        const v = this.ref(name, path);
        return Array.isArray(v) ? v.join(',') : toStr(v, path);
      }
      const dot = name.indexOf('.');
      if (dot > 0) return toStr(this.getAtt([name.slice(0, dot), name.slice(dot + 1)], path), path);
      return toStr(this.ref(name, path), path);
    });
  }

  private intrinsic(name: string, args: Json, path: string): Json {
    switch (name) {
      case 'Ref':
        return this.ref(args, path);
      case 'Fn::GetAtt':
        return this.getAtt(args, path);
      case 'Fn::Sub':
        return this.sub(args, path);
      case 'Fn::Join': {
        if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== 'string') {
          throw malformed(name, path, 'expected [delimiter, [values]]');
        }
        const list = this.resolve(args[1], `${path}[1]`);
        if (!Array.isArray(list)) throw malformed(name, path, 'the second element must resolve to a list');
        return list.map((v, i) => toStr(v, `${path}[1][${i}]`)).join(args[0]);
      }
      case 'Fn::Select': {
        if (!Array.isArray(args) || args.length !== 2) throw malformed(name, path, 'expected [index, list]');
        const index = Number(this.resolve(args[0], `${path}[0]`));
        const list = this.resolve(args[1], `${path}[1]`);
        if (!Array.isArray(list)) throw malformed(name, path, 'the second element must resolve to a list');
        if (!Number.isInteger(index) || index < 0 || index >= list.length) {
          throw malformed(name, path, `index ${index} is out of range for a list of ${list.length}`);
        }
        return list[index];
      }
      case 'Fn::Split': {
        if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== 'string') {
          throw malformed(name, path, 'expected [delimiter, string]');
        }
        return this.resolveString(args[1], `${path}[1]`).split(args[0]);
      }
      case 'Fn::If': {
        if (!Array.isArray(args) || args.length !== 3 || typeof args[0] !== 'string') {
          throw malformed(name, path, 'expected [condition, valueIfTrue, valueIfFalse]');
        }
        return this.condition(args[0], path)
          ? this.resolve(args[1], `${path}[1]`)
          : this.resolve(args[2], `${path}[2]`);
      }
      case 'Fn::Equals':
      case 'Fn::And':
      case 'Fn::Or':
      case 'Fn::Not':
        return this.evaluateCondition({ [name]: args }, path.slice(0, -(name.length + 1)));
      case 'Fn::FindInMap': {
        if (!Array.isArray(args) || args.length < 3) {
          throw malformed(name, path, 'expected [MapName, TopLevelKey, SecondLevelKey]');
        }
        const [mapName, top, second] = [0, 1, 2].map((i) => this.resolveString(args[i], `${path}[${i}]`));
        const found = this.template.Mappings?.[mapName as string]?.[top as string]?.[second as string];
        if (found !== undefined) return found;
        const fallback = args[3] as { DefaultValue?: Json } | undefined;
        if (fallback?.DefaultValue !== undefined) return this.resolve(fallback.DefaultValue, `${path}[3]`);
        throw new TemplateResolutionError(`Fn::FindInMap found no ${mapName}.${top}.${second} at ${path}`, {
          context: { path },
        });
      }
      case 'Fn::GetAZs': {
        const region = this.resolve(args, path);
        const r = typeof region === 'string' && region !== '' ? region : this.pseudo.region;
        return ['a', 'b', 'c'].map((az) => `${r}${az}`);
      }
      case 'Fn::Base64':
        return Buffer.from(this.resolveString(args, path), 'utf8').toString('base64');
      case 'Fn::ToJsonString':
        return JSON.stringify(this.resolve(args, path));
      case 'Fn::Length': {
        const list = this.resolve(args, path);
        if (!Array.isArray(list)) throw malformed(name, path, 'expected a list');
        return list.length;
      }
      default:
        throw new UnsupportedIntrinsicError(
          `intrinsic function ${name} is not supported by the local runtime (at ${path}, ${describeResource(path)})`,
          { context: { intrinsic: name, path } },
        );
    }
  }

  private evaluateCondition(definition: Json, path: string): boolean {
    if (typeof definition === 'boolean') return definition;
    if (definition === 'true' || definition === 'false') return definition === 'true';
    if (definition === null || typeof definition !== 'object' || Array.isArray(definition)) {
      throw malformed('condition', path, 'expected a condition function');
    }
    const entries = Object.entries(definition as Record<string, Json>);
    const [fn, args] = entries[0] ?? [];
    if (entries.length !== 1 || fn === undefined) throw malformed('condition', path, 'expected one function');
    const at = `${path}.${fn}`;
    switch (fn) {
      case 'Condition':
        if (typeof args !== 'string') throw malformed(fn, at, 'expected a condition name');
        return this.condition(args, at);
      case 'Fn::Equals': {
        if (!Array.isArray(args) || args.length !== 2) throw malformed(fn, at, 'expected [a, b]');
        const [a, b] = [this.resolve(args[0], `${at}[0]`), this.resolve(args[1], `${at}[1]`)];
        return JSON.stringify(normalise(a)) === JSON.stringify(normalise(b));
      }
      case 'Fn::And':
      case 'Fn::Or': {
        if (!Array.isArray(args) || args.length < 1) throw malformed(fn, at, 'expected a list of conditions');
        const values = args.map((c, i) => this.evaluateCondition(c, `${at}[${i}]`));
        return fn === 'Fn::And' ? values.every(Boolean) : values.some(Boolean);
      }
      case 'Fn::Not': {
        if (!Array.isArray(args) || args.length !== 1) throw malformed(fn, at, 'expected [condition]');
        return !this.evaluateCondition(args[0], `${at}[0]`);
      }
      default: {
        const value = this.resolve(definition, path);
        if (typeof value === 'boolean') return value;
        if (value === 'true' || value === 'false') return value === 'true';
        throw malformed('condition', path, `${fn} does not yield a boolean`);
      }
    }
  }
}

function normalise(value: Json): Json {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value;
}

function toStr(value: Json, path: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TemplateResolutionError(`expected a string at ${path}, got ${shownValue(value)}`, {
    context: { path },
  });
}

function malformed(fn: string, path: string, detail: string): TemplateResolutionError {
  return new TemplateResolutionError(`malformed ${fn} at ${path}: ${detail}`, {
    context: { path, intrinsic: fn },
  });
}

function describeResource(path: string): string {
  const m = /^Resources\.([^.[]+)/.exec(path);
  if (m) return `resource ${m[1]}`;
  const o = /^Outputs\.([^.[]+)/.exec(path);
  return o ? `output ${o[1]}` : 'template';
}
