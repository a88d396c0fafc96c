/**
 * The Middy middlewares that give the worker's logger each invocation's Lambda context: the
 * default logger's own (default-logger.ts `begin`), or, for a Powertools Logger given to
 * `createWorker`, what Powertools' `injectLambdaContext(logger, { resetKeys: true })` does
 * (logger lib/esm/middleware/middy.js, 2.36) through the Logger's own methods, so the worker
 * imports nothing from @aws-lambda-powertools/logger (issue 21: bundle bytes).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { MiddlewareObj } from '@middy/core';
import type { DefaultLogger } from './default-logger.ts';

/**
 * Where Powertools middlewares leave their cleanup in Middy's `request.internal`, for another
 * Powertools middleware that returns early (commons lib/esm/middleware/constants.js `LOGGER_KEY`).
 */
const POWERTOOLS_LOGGER_KEY = 'powertools-for-aws.logger';

/**
 * The methods the worker calls on a Logger given to `createWorker`: the level methods
 * (telemetry.ts `fromPowertools`) and those of {@link powertoolsLoggerContext}.
 */
const LOGGER_METHODS = [
  'debug',
  'info',
  'warn',
  'error',
  'refreshSampleRateCalculation',
  'addContext',
  'logEventIfEnabled',
  'clearBuffer',
  'resetKeys',
] as const;

/**
 * What is wrong with `createWorker`'s `logger` option, if anything: from JavaScript, a value
 * without the methods above (`console`) would be taken, then fail every invocation.
 */
export function loggerProblem(logger: unknown): string | undefined {
  if (logger === undefined) return undefined;
  const methods = (logger ?? {}) as Record<string, unknown>;
  const missing = LOGGER_METHODS.filter((name) => typeof methods[name] !== 'function');
  if (missing.length === 0) return undefined;
  return `logger must be a Powertools Logger (new Logger() from @aws-lambda-powertools/logger), or left out for the worker's own; the given one has no ${missing.join(', ')}`;
}

/** Before each invocation: the default logger's sampling, Lambda context and event line. */
export function defaultLoggerContext(logger: DefaultLogger): MiddlewareObj {
  return {
    before: (request) => {
      logger.begin(request.event, request.context);
    },
  };
}

/**
 * As `injectLambdaContext(logger, { resetKeys: true })`: before, debug sampling drawn again, the
 * Lambda context added and the event logged when the Logger logs events; after or on an error,
 * its log buffer cleared and its temporary keys (`appendKeys`) reset.
 */
export function powertoolsLoggerContext(logger: Logger): MiddlewareObj {
  const after = (): void => {
    logger.clearBuffer();
    logger.resetKeys();
  };
  return {
    before: (request) => {
      request.internal = { ...request.internal, [POWERTOOLS_LOGGER_KEY]: after };
      logger.refreshSampleRateCalculation();
      logger.addContext(request.context);
      logger.logEventIfEnabled(request.event);
    },
    after,
    onError: after,
  };
}
