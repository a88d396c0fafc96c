/**
 * The order in which the stack's resources are created: every resource after the ones it
 * references (`Ref`, `Fn::GetAtt`, `Fn::Sub`) or names in `DependsOn`, so a dead-letter queue
 * exists before the queue whose RedrivePolicy names its ARN.
 */
import { TemplateResolutionError } from '../errors.ts';
import type { CfnResource, CfnTemplate } from '../template-resolver.ts';

/** Prefix of the pseudo parameters (`AWS::Region`...), which are no resources. */
const PSEUDO_PREFIX = 'AWS::';

/**
 * The logical ids a value refers to through `Ref`, `Fn::GetAtt` and `Fn::Sub` (parameters and
 * pseudo parameters excluded). Used to order creation: a DLQ before the queue that names it.
 */
export function referencedResources(
  value: unknown,
  template: CfnTemplate,
  into = new Set<string>(),
): Set<string> {
  const isResource = (id: string) => !id.startsWith(PSEUDO_PREFIX) && template.Resources[id] !== undefined;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const item of v) visit(item);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [k, inner] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'Ref' && typeof inner === 'string' && isResource(inner)) into.add(inner);
      else if (k === 'Fn::GetAtt') {
        const id =
          typeof inner === 'string' ? inner.split('.')[0] : Array.isArray(inner) ? inner[0] : undefined;
        if (typeof id === 'string' && isResource(id)) into.add(id);
        if (Array.isArray(inner)) visit(inner[1]);
      } else if (k === 'Fn::Sub') {
        const text = typeof inner === 'string' ? inner : Array.isArray(inner) ? inner[0] : undefined;
        const vars = Array.isArray(inner) ? (inner[1] as Record<string, unknown> | undefined) : undefined;
        if (typeof text === 'string') {
          for (const m of text.matchAll(/\$\{([^}!][^}]*)\}/g)) {
            const name = (m[1] ?? '').trim();
            if (vars && Object.hasOwn(vars, name)) continue;
            const id = name.split('.')[0] ?? '';
            if (isResource(id)) into.add(id);
          }
        }
        if (vars) visit(vars);
      } else visit(inner);
    }
  };
  visit(value);
  return into;
}

/**
 * Logical ids of the template's resources in an order where every resource comes after the ones
 * it references or `DependsOn` (Kahn's algorithm, ties broken by template order).
 * @throws {TemplateResolutionError} on a dependency cycle or a `DependsOn` naming no resource.
 */
export function dependencyOrder(template: CfnTemplate): string[] {
  const ids = Object.keys(template.Resources);
  const deps = new Map<string, Set<string>>();
  for (const id of ids) {
    const resource = template.Resources[id] as CfnResource;
    const set = referencedResources(resource.Properties ?? {}, template);
    const dependsOn = resource.DependsOn === undefined ? [] : [resource.DependsOn].flat();
    for (const d of dependsOn) {
      if (template.Resources[d] === undefined) {
        throw new TemplateResolutionError(`resource ${id} DependsOn unknown resource ${d}`, {
          context: { path: `Resources.${id}.DependsOn`, logicalId: id },
        });
      }
      set.add(d);
    }
    set.delete(id);
    deps.set(id, set);
  }
  const order: string[] = [];
  const done = new Set<string>();
  while (order.length < ids.length) {
    const next = ids.find((id) => !done.has(id) && [...(deps.get(id) ?? [])].every((d) => done.has(d)));
    if (next === undefined) {
      const stuck = ids.filter((id) => !done.has(id));
      throw new TemplateResolutionError(`dependency cycle among resources ${stuck.join(', ')}`, {
        context: { path: 'Resources', resources: stuck },
      });
    }
    done.add(next);
    order.push(next);
  }
  return order;
}
