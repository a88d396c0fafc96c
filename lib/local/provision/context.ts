/**
 * What the provisioning of every resource kind (queues.ts, tables.ts, functions.ts, mappings.ts)
 * shares: the stack's name, region and account, the template resolver, and the list of warnings
 * the run collects.
 */
import type { TemplateResolver } from '../template-resolver.ts';

/** What names and ARNs are made of. */
export interface StackIdentity {
  readonly stackName: string;
  readonly region: string;
  /** ARN partition. Always `aws` locally. */
  readonly partition: string;
  /** Account id in ARNs: read at each use, as the first queue created reveals the emulator's. */
  accountId(): string;
}

/** Shared state of one `provisionStack` run (stack.ts). */
export interface ProvisionContext extends StackIdentity {
  readonly resolver: TemplateResolver;
  /**
   * What to do when a queue or table of the same name already exists (external endpoints only):
   * `recreate` deletes it first, `fail` lets the emulator refuse it.
   */
  readonly existing: 'recreate' | 'fail';
  /** Differences from AWS met while provisioning (TTL unsupported...); appended to. */
  readonly warnings: string[];
}
