import type { Response } from 'express';
import type { FailureKind } from '../../domain/errors/domain-error';

/** RFC 7807 bodies, exactly the shape of spec §7 and DESIGN §10. */

export interface ProblemBody {
  type: 'about:blank';
  title: string;
  status: number;
  detail?: string;
  extensions?: { errors: string[] };
}

const STATUS: Record<FailureKind, { status: number; title: string }> = {
  NotFound: { status: 404, title: 'Not Found' },
  Validation: { status: 400, title: 'Validation Failed' },
  Conflict: { status: 409, title: 'Conflict' },
  PreconditionFailed: { status: 412, title: 'Precondition Failed' },
  BadRequest: { status: 400, title: 'Bad Request' },
  TooLarge: { status: 413, title: 'Payload Too Large' },
  TooManyRequests: { status: 429, title: 'Too Many Requests' },
  Unavailable: { status: 503, title: 'Service Unavailable' },
  Internal: { status: 500, title: 'Internal Server Error' },
};

export function problemFor(kind: FailureKind, errors: string[]): ProblemBody {
  const { status, title } = STATUS[kind];
  const body: ProblemBody = { type: 'about:blank', title, status };
  if (kind === 'Internal') {
    body.detail = 'An unexpected error occurred.'; // never internals (DESIGN §8)
    return body;
  }
  if (kind !== 'Validation' && errors[0]) body.detail = errors[0];
  if (kind === 'Validation' || kind === 'Conflict') body.extensions = { errors };
  return body;
}

export function problem(status: number, title: string, detail?: string): ProblemBody {
  return detail === undefined ? { type: 'about:blank', title, status } : { type: 'about:blank', title, status, detail };
}

export function sendProblem(res: Response, body: ProblemBody): void {
  res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
}
