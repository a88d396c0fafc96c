/** The console backend's defaults, defined once (every page module reads them here). */
export const CONSOLE_DEFAULTS = {
  /** Seconds between samples on emulators / on AWS. */
  sampleSecondsLocal: 2,
  sampleSecondsAws: 10,
  /** How long samples are kept for the chart, minutes. */
  historyMinutes: 60,
  /** A DLQ read younger than this is served from memory unless a refresh is asked for, ms. */
  deadLetterCacheMs: 5_000,
  /** Alarm states and CloudWatch series are read at most this often, ms. */
  cloudWatchCacheMs: 60_000,
  /** A dry run's plan can be confirmed within this long, ms. */
  planTtlMs: 10 * 60_000,
  /** Messages listed per DLQ on the page. */
  maxListedMessages: 500,
  /** Longest body returned for one message, characters. */
  maxBodyChars: 256 * 1024,
} as const;
