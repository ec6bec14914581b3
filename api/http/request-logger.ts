import type { RequestHandler } from 'express';
import type { Logger } from '../../infra/logger';
import { requestIdFor } from './request-id';

declare module 'http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id), set first thing. */
    id: string;
    /** A logger bound to this request's id. */
    log: Logger;
  }
}

export interface RequestLoggerOptions {
  /** Requests whose completion is not logged (health probes). */
  ignore(url: string): boolean;
}

/**
 * Request ids and one completion line per request: `error` for 5xx, `info` for 4xx, `debug` for the
 * rest. Replaces pino-http, which serialises every request into a child logger up front, whether or
 * not a line is ever written at the configured level: measured at ~8% of a keyed GET's throughput.
 * Here the child logger is made on first use, and the request and response are serialised only for
 * a line that is written.
 */
export function requestLogger(logger: Logger, options: RequestLoggerOptions): RequestHandler {
  return (req, res, next) => {
    const started = Date.now();
    const id = requestIdFor(req, res);
    let child: Logger | undefined;
    req.id = id;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => (child ??= logger.child({ reqId: id })),
    });
    if (options.ignore(req.originalUrl)) return next();
    const done = () => {
      res.off('finish', done);
      res.off('close', done);
      const level = res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug';
      if (!logger.isLevelEnabled(level)) return;
      const message = res.writableFinished ? 'request completed' : 'request closed before the response was complete';
      req.log[level]({ req, res, responseTime: Date.now() - started }, message);
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
