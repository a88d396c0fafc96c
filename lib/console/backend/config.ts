/**
 * What the page learns first (`GET /api/config`): the console's title, mode, queues and tables,
 * whether it is read-only and how often it samples. Only what is in memory: nothing is read.
 */
import type { ConsoleSetup } from '../setup.ts';

/** The console as the page sees it. */
export interface ConfigView {
  readonly title: string;
  readonly mode: ConsoleSetup['mode'];
  readonly region: string | undefined;
  readonly readOnly: boolean;
  /** Seconds between samples of the queues. */
  readonly sampleSeconds: number;
  readonly queues: readonly {
    readonly id: string;
    readonly url: string;
    readonly dlqUrl: string | undefined;
  }[];
  readonly idempotencyTables: readonly string[];
  /** Whether `once` steps are found without their names (emulators), or must be named (AWS). */
  readonly scanSteps: boolean;
  readonly notes: readonly string[];
}

/** The config view of a setup. */
export function configView(setup: ConsoleSetup, readOnly: boolean, sampleSeconds: number): ConfigView {
  return {
    title: setup.title,
    mode: setup.mode,
    region: setup.region,
    readOnly,
    sampleSeconds,
    queues: setup.queues.map((q) => ({ id: q.id, url: q.url, dlqUrl: q.dlqUrl })),
    idempotencyTables: setup.idempotencyTables,
    scanSteps: setup.scanSteps ?? setup.mode !== 'aws',
    notes: setup.notes ?? [],
  };
}
