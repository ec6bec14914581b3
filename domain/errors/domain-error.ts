/**
 * Failures a command or query can end in. They carry no HTTP: the API maps them to problem bodies
 * (spec §7) at its edge, and workers send them back over the queue as plain data (`toFailure`).
 */

export type FailureKind = 'NotFound' | 'Validation' | 'Conflict' | 'PreconditionFailed' | 'BadRequest' | 'Internal';

export interface Failure {
  kind: FailureKind;
  /** Messages of the form `<Entity.Path>: <message>` (spec §7 rule 2), or a sentence. */
  errors: string[];
}

export class DomainError extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly errors: string[],
  ) {
    super(errors[0] ?? kind);
    this.name = `${kind}Error`;
  }

  toFailure(): Failure {
    return { kind: this.kind, errors: this.errors };
  }

  static from(failure: Failure): DomainError {
    return new DomainError(failure.kind, failure.errors);
  }
}

export const notFound = (message: string) => new DomainError('NotFound', [message]);
export const validationFailed = (errors: string[]) => new DomainError('Validation', errors);
export const conflict = (errors: string[]) => new DomainError('Conflict', errors);
export const preconditionFailed = (message: string) => new DomainError('PreconditionFailed', [message]);
export const badRequest = (message: string) => new DomainError('BadRequest', [message]);
