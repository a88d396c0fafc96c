/**
 * The worker's extra `environment`: it cannot set a variable the construct sets itself (the
 * queue's URLs, the limits the queue was built for, the service name and metrics namespace), since
 * the construct's value would silently win. Each such name is refused with the prop that sets it.
 * `NODE_OPTIONS` is refused too when `sourceMaps` is on, which sets it.
 * Source: docs/contracts.md, "Worker environment".
 */
import { RESERVED_WORKER_ENVIRONMENT, RESERVED_WORKER_ENVIRONMENT_PREFIXES } from '../defaults.ts';
import { error, type JobQueueFinding, type JobQueueRule } from './types.ts';

export const environmentRule: JobQueueRule = ({ props }) => {
  const environment: unknown = props.environment;
  if (environment === undefined || environment === null || typeof environment !== 'object') return [];
  const findings: JobQueueFinding[] = [];
  for (const name of Object.keys(environment)) {
    const instead = Object.hasOwn(RESERVED_WORKER_ENVIRONMENT, name)
      ? RESERVED_WORKER_ENVIRONMENT[name]
      : Object.entries(RESERVED_WORKER_ENVIRONMENT_PREFIXES).find(([prefix]) => name.startsWith(prefix))?.[1];
    if (instead !== undefined) {
      findings.push(
        error(`environment: ${name} is set by the construct and cannot be overridden; ${instead}`),
      );
    } else if (name === 'NODE_OPTIONS' && props.sourceMaps === true) {
      findings.push(
        error(
          'environment: NODE_OPTIONS is set by the construct when sourceMaps is true; drop sourceMaps and add --enable-source-maps to your NODE_OPTIONS',
        ),
      );
    }
  }
  return findings;
};
