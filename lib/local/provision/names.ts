/**
 * Physical names of the resources the local runtime creates: the template's name property when
 * given, else `<StackName>-<LogicalId>` cut to the service's limit. CloudFormation adds a random
 * suffix; the local names are deterministic instead.
 */

/** `<stack>-<logicalId>` cut to `max` characters including `suffix`. */
export function generatedName(stackName: string, logicalId: string, max: number, suffix = ''): string {
  return `${stackName}-${logicalId}`.slice(0, max - suffix.length) + suffix;
}
