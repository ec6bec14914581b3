import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError } from '../../domain/errors/domain-error';
import { problem, problemFor, sendProblem } from './problem';
import { isStoreUnavailable, OUTAGE_RETRY_AFTER_SECONDS } from '../../db/infra/store-outage';

/** Errors raised by body parsing and other middleware carry an HTTP status of their own. */
interface HttpError extends Error {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

/**
 * The one place an error becomes a response: domain failures by spec §7, client mistakes caught by
 * middleware as 4xx problems, and everything else as a bare 500 whose details go only to the log.
 */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  if (res.headersSent) {
    req.log?.error({ err }, 'error after response started');
    res.destroy();
    return;
  }
  if (err instanceof DomainError) {
    if (err.kind === 'Internal') req.log?.error({ err }, 'internal failure');
    if (err.retryAfter !== undefined) res.setHeader('Retry-After', String(err.retryAfter));
    sendProblem(res, problemFor(err.kind, err.errors));
    return;
  }
  const httpErr = err as HttpError;
  const status = httpErr.status ?? httpErr.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    sendProblem(res, clientProblem(httpErr, status));
    return;
  }
  if (isStoreUnavailable(err)) {
    // A store outage, an exhausted pool or a statement timeout: the client may simply try again.
    req.log?.warn(
      { err: { message: (err as Error).message, code: (err as { code?: unknown }).code } },
      'store unavailable',
    );
    res.setHeader('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
    sendProblem(res, problemFor('Unavailable', [storeDetail(err)]));
    return;
  }
  req.log?.error({ err }, 'unhandled error');
  sendProblem(res, problemFor('Internal', []));
};

/** What a 503 says: never the driver's message (it may name hosts or SQL), only what to do. */
function storeDetail(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === '57014')
    return 'The query took longer than the statement time limit (STATEMENT_TIMEOUT_MS); narrow it or try again later.';
  return 'A data store is not answering right now; try again shortly.';
}

function clientProblem(err: HttpError, status: number) {
  switch (err.type) {
    case 'entity.parse.failed':
      return problem(400, 'Bad Request', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return problem(413, 'Payload Too Large', 'The request body exceeds the 1 MiB limit.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return problem(415, 'Unsupported Media Type', err.message);
    default:
      return problem(status, titleOf(status), err.expose ? err.message : undefined);
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
};

export function titleOf(status: number): string {
  return TITLES[status] ?? 'Bad Request';
}

/** Unknown routes answer with a problem body like everything else. */
export const notFoundHandler: RequestHandler = (req, res) => {
  sendProblem(res, problem(404, 'Not Found', `No resource at ${req.method} ${req.path}.`));
};
