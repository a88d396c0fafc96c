/**
 * Types for the console page's checked JSDoc (lib/console/page/*.js, `@import` from here): the
 * API's answers as the backend builds them, so a field the page reads is checked against the
 * server, and the few browser objects the page uses. Types only: the browser never loads it.
 */

import type { FiredSchedule } from '../../ops/fire-schedule.ts';
import type { CancelScheduledJobResult } from '../../ops/schedules.ts';
import type { ConfigView } from '../backend/config.ts';
import type { DeadLettersView, FullMessageView, MessageView } from '../backend/dead-letters.ts';
import type { ConsoleChain, ConsoleChainJob, JobView } from '../backend/job.ts';
import type { QueuesView } from '../backend/queues.ts';
import type { RedriveView } from '../backend/redrive.ts';
import type { LimitsView, SchedulesView } from '../backend/schedules.ts';
import type { VerifyView } from '../backend/verify.ts';
import type { JobRecordView } from '../jobs.ts';

export type {
  ConfigView,
  ConsoleChain,
  ConsoleChainJob,
  DeadLettersView,
  FullMessageView,
  JobRecordView,
  JobView,
  LimitsView,
  MessageView,
  QueuesView,
  SchedulesView,
  VerifyView,
};

/** A cancel's answer (`POST /api/schedules/cancel`). */
export type CancelView = CancelScheduledJobResult;
/** A fire-now's answer (`POST /api/schedules/fire`). */
export type FiredView = FiredSchedule;

/** A dry run's answer. */
export type DryRunView = Extract<RedriveView, { dryRun: true }>;
/** A confirmed redrive's answer. */
export type RedriveResultView = Extract<RedriveView, { dryRun: false }>;
/** What a redrive selects (`POST /api/queues/:id/redrive` `filter`). */
export interface FilterFields {
  readonly reasons?: readonly string[];
  readonly jobTypes?: readonly string[];
  readonly errorNames?: readonly string[];
  readonly jobIds?: readonly string[];
}

/** The page's place: `#/<path>?<params>`. */
export interface Route {
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
}

// The browser, as far as the page uses it. The project's tsconfig has no DOM lib (everything else
// runs on Node, where `document` must stay an error), so the page names what it needs here and
// reaches the globals through ./browser.js.

/** An element, as far as the page reads one. */
export interface PageElement {
  readonly clientWidth: number;
  getAttribute(name: string): string | null;
}

/** The browser's globals the page uses. */
export interface Browser {
  readonly document: {
    title: string;
    querySelector(selector: string): PageElement | null;
    getElementById(id: string): PageElement | null;
  };
  readonly location: { hash: string; readonly search: string; readonly pathname: string };
  readonly history: { replaceState(data: unknown, unused: string, url: string): void };
  /** Asks before an action (cancel a job, fire a schedule); true when the user agrees. */
  confirm(message: string): boolean;
  addEventListener(type: 'hashchange' | 'resize', listener: () => void): void;
  removeEventListener(type: 'hashchange' | 'resize', listener: () => void): void;
}

/** An `input` event of a text field. */
export interface FieldEvent {
  readonly currentTarget: { readonly value: string };
}

/** A form's `submit` event. */
export interface SubmitEvent {
  preventDefault(): void;
}
