import test from 'ava';
import { failureAnswer, odataFailureAnswer } from '../../api/http/answer';
import type { Failure } from '../../domain/errors/domain-error';

/**
 * The OData JSON error (DESIGN §17) is rendered from the same Failure as the root's problem body:
 * same status and headers, the per-field messages (`extensions.errors`) as `details` with the
 * member they name as `target`.
 */

const parse = (body: string | undefined) => JSON.parse(body!) as { error: Record<string, unknown> };

test('a validation failure: every message a detail, each with its target; same status as the problem', (t) => {
  const failure: Failure = {
    kind: 'Validation',
    errors: ['Scheme.SchemeName: must NOT have fewer than 1 characters', 'Scheme.TotalUnits: must be >= 0'],
  };
  const answer = odataFailureAnswer(failure);
  t.is(answer.status, failureAnswer(failure).status);
  t.is(answer.headers['content-type'], 'application/json');
  t.deepEqual(parse(answer.body), {
    error: {
      code: 'Validation',
      message: 'Validation Failed',
      details: [
        { code: 'Validation', message: failure.errors[0], target: 'SchemeName' },
        { code: 'Validation', message: failure.errors[1], target: 'TotalUnits' },
      ],
    },
  });
});

test('one per-field message is also the error itself, with its target', (t) => {
  const failure: Failure = { kind: 'Validation', errors: ['Scheme.Address: Address does not exist'] };
  t.like(parse(odataFailureAnswer(failure).body).error, {
    message: 'Scheme.Address: Address does not exist',
    target: 'Address',
  });
});

test('the headers of a kind are kept (Allow, Retry-After, WWW-Authenticate); internals are never told', (t) => {
  const refused = odataFailureAnswer({ kind: 'MethodNotAllowed', errors: ['no'], allow: ['GET'] });
  t.is(refused.status, 405);
  t.is(refused.headers.allow, 'GET');
  t.deepEqual(parse(refused.body), { error: { code: 'MethodNotAllowed', message: 'no', details: [] } });
  const later = odataFailureAnswer({ kind: 'Unavailable', errors: ['down'], retryAfter: 5 });
  t.is(later.headers['retry-after'], '5');
  t.truthy(
    odataFailureAnswer({ kind: 'Unauthorized', errors: ['A bearer token is required.'] }).headers['www-authenticate'],
  );
  const internal = parse(odataFailureAnswer({ kind: 'Internal', errors: ['SELECT secret FROM x'] }).body);
  t.is(internal.error.message, 'An unexpected error occurred.');
});
