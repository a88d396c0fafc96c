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
