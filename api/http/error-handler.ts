import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import {
  DomainError,
  badRequest,
  notFound,
  unavailable,
  unsupportedMediaType,
  type FailureKind,
} from '../../domain/errors/domain-error';
import { isStoreUnavailable, OUTAGE_RETRY_AFTER_SECONDS } from '../../infra/store-outage';
import { requestBodyTooLarge } from './request-body-limit';
import { STATUS_OF } from './problem-status';
import { failureAnswer, odataFailureAnswer } from './answer';
import { underODataRoot } from './odata-root';
import { sendAnswer } from './send-answer';

/** Errors raised by body parsing and other middleware carry an HTTP status of their own. */
interface HttpError extends Error {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

/**
 * The one place an error becomes a response (issue 11: routes only throw). Every error is first
 * made a DomainError — domain failures as they are, client mistakes caught by middleware as their
 * 4xx kind, store outages as 503, anything else as Internal (whose details go only to the log) —
 * then written as the spec §7 problem body with the headers its kind carries.
 */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  if (res.headersSent) {
    req.log?.error({ err }, 'error after response started');
    res.destroy();
    return;
  }
  const failure = domainErrorOf(err, req.log);
  if (failure.kind === 'Internal')
    req.log?.error({ err }, err instanceof DomainError ? 'internal failure' : 'unhandled error');
  sendFailure(res, failure, underODataRoot(req.path));
};

/** Unknown routes answer with a problem body like everything else. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(notFound(`No resource at ${req.method} ${req.path}.`));
};

type Log = { warn(obj: object, msg: string): void } | undefined;

function domainErrorOf(err: unknown, log: Log): DomainError {
  if (err instanceof DomainError) return err;
  const httpErr = err as HttpError;
  const status = httpErr.status ?? httpErr.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return clientError(httpErr, status);
  if (isStoreUnavailable(err)) {
    // A store outage, an exhausted pool or a statement timeout: the client may simply try again.
    log?.warn(
      { err: { message: (err as Error).message, code: (err as { code?: unknown }).code } },
      'store unavailable',
    );
    return unavailable(storeDetail(err), OUTAGE_RETRY_AFTER_SECONDS);
  }
  return new DomainError('Internal', []);
}

/** What a 503 says: never the driver's message (it may name hosts or SQL), only what to do. */
function storeDetail(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === '57014')
    return 'The query took longer than the statement time limit (STATEMENT_TIMEOUT_MS); narrow it or try again later.';
  return 'A data store is not answering right now; try again shortly.';
}

/** The kind of each 4xx status (400 is BadRequest, not Validation: middleware checks no entity rules). */
const KIND_OF_STATUS = new Map<number, FailureKind>();
for (const [kind, { status }] of Object.entries(STATUS_OF) as [FailureKind, { status: number }][]) {
  if (status < 500 && !KIND_OF_STATUS.has(status)) KIND_OF_STATUS.set(status, kind);
}

/** A 4xx from middleware (body-parser, the router) as the failure it is. */
function clientError(err: HttpError, status: number): DomainError {
  switch (err.type) {
    case 'entity.parse.failed':
      return badRequest('The request body is not valid JSON.');
    case 'entity.too.large':
      return requestBodyTooLarge();
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType(err.message);
    default:
      return new DomainError(KIND_OF_STATUS.get(status) ?? 'BadRequest', err.expose ? [err.message] : []);
  }
}

/**
 * The problem body and the headers a kind carries (Retry-After, Allow, WWW-Authenticate, Location);
 * under `/odata` the same failure as an OData error (DESIGN §17).
 */
function sendFailure(res: Response, err: DomainError, odata: boolean): void {
  const failure = err.toFailure();
  sendAnswer(res, odata ? odataFailureAnswer(failure) : failureAnswer(failure));
}
