/**
 * Failures a command or query can end in. They carry no HTTP: the API maps them to problem bodies
 * (spec §7) at its edge, and workers send them back over the queue as plain data (`toFailure`).
 */

export type FailureKind =
  | 'NotFound'
  | 'Validation'
  | 'Conflict'
  | 'PreconditionFailed'
  | 'BadRequest'
  /** 413: a request over a size limit (the message names the limit). */
  | 'TooLarge'
  /** 429: a per-subject limit (rate, pending commands, exports); carries Retry-After. */
  | 'TooManyRequests'
  /** 503: a store or queue cannot answer now (outage, pool exhausted, statement timeout); carries Retry-After. */
  | 'Unavailable'
  | 'Internal';

export interface Failure {
  kind: FailureKind;
  /** Messages of the form `<Entity.Path>: <message>` (spec §7 rule 2), or a sentence. */
  errors: string[];
  /** Seconds a client should wait before trying again (429, 503). */
  retryAfter?: number;
}

export class DomainError extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly errors: string[],
    readonly retryAfter?: number,
  ) {
    super(errors[0] ?? kind);
    this.name = `${kind}Error`;
  }

  toFailure(): Failure {
    return this.retryAfter === undefined
      ? { kind: this.kind, errors: this.errors }
      : { kind: this.kind, errors: this.errors, retryAfter: this.retryAfter };
  }

  static from(failure: Failure): DomainError {
    return new DomainError(failure.kind, failure.errors, failure.retryAfter);
  }
}

export const notFound = (message: string) => new DomainError('NotFound', [message]);
export const validationFailed = (errors: string[]) => new DomainError('Validation', errors);
export const conflict = (errors: string[]) => new DomainError('Conflict', errors);
export const preconditionFailed = (message: string) => new DomainError('PreconditionFailed', [message]);
export const badRequest = (message: string) => new DomainError('BadRequest', [message]);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new DomainError('TooManyRequests', [message], retryAfterSeconds);
export const unavailable = (message: string, retryAfterSeconds = 5) =>
  new DomainError('Unavailable', [message], retryAfterSeconds);
