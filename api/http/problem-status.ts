import type { FailureKind } from '../../domain/errors/domain-error';

/** RFC 7807 bodies, exactly the shape of spec §7 and DESIGN §10. */

export interface ProblemBody {
  type: 'about:blank';
  title: string;
  status: number;
  detail?: string;
  extensions?: { errors: string[] };
}

/** The HTTP face of each failure kind (domain/errors/domain-error.ts): the only table that knows statuses. */
export const STATUS_OF: Record<FailureKind, { status: number; title: string }> = {
  BadRequest: { status: 400, title: 'Bad Request' },
  Validation: { status: 400, title: 'Validation Failed' },
  Unauthorized: { status: 401, title: 'Unauthorized' },
  Forbidden: { status: 403, title: 'Forbidden' },
  NotFound: { status: 404, title: 'Not Found' },
  MethodNotAllowed: { status: 405, title: 'Method Not Allowed' },
  NotAcceptable: { status: 406, title: 'Not Acceptable' },
  Conflict: { status: 409, title: 'Conflict' },
  PreconditionFailed: { status: 412, title: 'Precondition Failed' },
  TooLarge: { status: 413, title: 'Payload Too Large' },
  UnsupportedMediaType: { status: 415, title: 'Unsupported Media Type' },
  FailedDependency: { status: 424, title: 'Failed Dependency' },
  TooManyRequests: { status: 429, title: 'Too Many Requests' },
  Unavailable: { status: 503, title: 'Service Unavailable' },
  Internal: { status: 500, title: 'Internal Server Error' },
};

/** The problem body of a failure: a response's (error-handler.ts) or a finished command's state. */
export function problemFor(kind: FailureKind, errors: string[]): ProblemBody {
  const { status, title } = STATUS_OF[kind];
  const body: ProblemBody = { type: 'about:blank', title, status };
  if (kind === 'Internal') {
    body.detail = 'An unexpected error occurred.'; // never internals (DESIGN §8)
    return body;
  }
  if (kind !== 'Validation' && errors[0]) body.detail = errors[0];
  if (kind === 'Validation' || kind === 'Conflict') body.extensions = { errors };
  return body;
}
