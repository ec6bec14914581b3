/**
 * The one error model (issue 11 step 2): every way a request, command or query can fail is a kind
 * below. Code anywhere throws one; only the API's error handler (`api/http/error-handler.ts`)
 * turns it into a response (spec §7 problem bodies and their headers), and workers send it back
 * over the queue as plain data (`toFailure` / `DomainError.from`). Nothing here knows HTTP: the
 * status of each kind lives in one table, at the API's edge (`api/http/problem-status.ts`).
 */

export type FailureKind =
  /** 400: a request the API cannot make sense of (a bad query option, header or key format). */
  | 'BadRequest'
  /** 400: a body that breaks the entity's rules; `errors` lists every broken rule. */
  | 'Validation'
  /** 401: no credentials, or credentials that were refused; carries `tokenError` for the latter. */
  | 'Unauthorized'
  /** 403: an authenticated caller lacking the role an action needs. */
  | 'Forbidden'
  | 'NotFound'
  /** 405: the resource exists but not for this method; carries `allow`. */
  | 'MethodNotAllowed'
  /** 406: no representation the client accepts is offered. */
  | 'NotAcceptable'
  | 'Conflict'
  | 'PreconditionFailed'
  /** 413: a request over a size limit (the message names the limit). */
  | 'TooLarge'
  /** 415: a body of a media type the action does not take. */
  | 'UnsupportedMediaType'
  /** 424: a `$batch` request not run because one it depends on (or a request of its group) failed. */
  | 'FailedDependency'
  /** 429: a per-subject limit (rate, pending commands, exports); carries `retryAfter`. */
  | 'TooManyRequests'
  /** 503: a store or queue cannot answer now (outage, pool exhausted, statement timeout); carries `retryAfter`. */
  | 'Unavailable'
  | 'Internal';

/** Why offered credentials were refused (RFC 6750 §3.1 error codes). */
export type TokenError = 'invalid_request' | 'invalid_token';

/** What some kinds carry besides their messages; each field belongs to the kinds named. */
export interface FailureDetails {
  /** TooManyRequests, Unavailable: seconds a client should wait before trying again. */
  retryAfter?: number;
  /** MethodNotAllowed: the methods the resource does answer. */
  allow?: readonly string[];
  /** Unauthorized: set when credentials were offered and refused, absent when none were. */
  tokenError?: TokenError;
  /** Unavailable: where the outcome of work that may still happen will be (a command's state). */
  outcomeAt?: string;
}

export interface Failure extends FailureDetails {
  kind: FailureKind;
  /** Messages of the form `<Entity.Path>: <message>` (spec §7 rule 2), or a sentence. */
  errors: string[];
}

export class DomainError extends Error {
  readonly retryAfter?: number;
  readonly allow?: readonly string[];
  readonly tokenError?: TokenError;
  readonly outcomeAt?: string;

  constructor(
    readonly kind: FailureKind,
    readonly errors: string[],
    details: FailureDetails = {},
  ) {
    super(errors[0] ?? kind);
    this.name = `${kind}Error`;
    this.retryAfter = details.retryAfter;
    this.allow = details.allow;
    this.tokenError = details.tokenError;
    this.outcomeAt = details.outcomeAt;
  }

  /** Plain data for the queue and the command log: only the details that are set. */
  toFailure(): Failure {
    const failure: Failure = { kind: this.kind, errors: this.errors };
    if (this.retryAfter !== undefined) failure.retryAfter = this.retryAfter;
    if (this.allow !== undefined) failure.allow = this.allow;
    if (this.tokenError !== undefined) failure.tokenError = this.tokenError;
    if (this.outcomeAt !== undefined) failure.outcomeAt = this.outcomeAt;
    return failure;
  }

  static from(failure: Failure): DomainError {
    const { kind, errors, ...details } = failure;
    return new DomainError(kind, errors, details);
  }
}

/** Seconds to wait when nothing better is known (a store outage, a full export pool). */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

export const badRequest = (message: string) => new DomainError('BadRequest', [message]);
export const validationFailed = (errors: string[]) => new DomainError('Validation', errors);
/** `tokenError` absent: no credentials were sent, so the challenge names no error (RFC 6750 §3.1). */
export const unauthorized = (message: string, tokenError?: TokenError) =>
  new DomainError('Unauthorized', [message], { tokenError });
export const forbidden = (message: string) => new DomainError('Forbidden', [message]);
export const notFound = (message: string) => new DomainError('NotFound', [message]);
export const methodNotAllowed = (message: string, allow: readonly string[]) =>
  new DomainError('MethodNotAllowed', [message], { allow });
export const notAcceptable = (message: string) => new DomainError('NotAcceptable', [message]);
export const conflict = (errors: string[]) => new DomainError('Conflict', errors);
export const preconditionFailed = (message: string) => new DomainError('PreconditionFailed', [message]);
export const tooLarge = (message: string) => new DomainError('TooLarge', [message]);
export const unsupportedMediaType = (message: string) => new DomainError('UnsupportedMediaType', [message]);
export const failedDependency = (message: string) => new DomainError('FailedDependency', [message]);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new DomainError('TooManyRequests', [message], { retryAfter: retryAfterSeconds });
export const unavailable = (message: string, retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS, outcomeAt?: string) =>
  new DomainError('Unavailable', [message], { retryAfter: retryAfterSeconds, outcomeAt });
