import type { AddressInfo } from 'node:net';
import test from 'ava';
import express from 'express';
import {
  DomainError,
  badRequest,
  conflict,
  forbidden,
  methodNotAllowed,
  notAcceptable,
  notFound,
  preconditionFailed,
  tooLarge,
  tooManyRequests,
  unauthorized,
  unavailable,
  unsupportedMediaType,
  validationFailed,
} from '../../domain/errors/domain-error';
import { errorHandler, notFoundHandler } from '../../api/http/error-handler';

/**
 * Every failure kind through the one error handler: its status, title, detail and the headers it
 * carries (Retry-After, Allow, WWW-Authenticate, Location), and its round trip over the queue.
 */

const KINDS: readonly [string, DomainError, number, string][] = [
  ['bad-request', badRequest('bad'), 400, 'Bad Request'],
  ['validation', validationFailed(['Scheme.Name: required']), 400, 'Validation Failed'],
  ['unauthorized', unauthorized('A bearer token is required.'), 401, 'Unauthorized'],
  ['forbidden', forbidden('This action needs the role Admin.'), 403, 'Forbidden'],
  ['not-found', notFound('gone'), 404, 'Not Found'],
  ['method', methodNotAllowed('/Activities is read-only.', ['GET']), 405, 'Method Not Allowed'],
  ['not-acceptable', notAcceptable('Exports are offered as text/csv.'), 406, 'Not Acceptable'],
  ['conflict', conflict(['Scheme: taken']), 409, 'Conflict'],
  ['precondition', preconditionFailed('stale'), 412, 'Precondition Failed'],
  ['too-large', tooLarge('too big'), 413, 'Payload Too Large'],
  ['media-type', unsupportedMediaType('POST and PUT take application/json.'), 415, 'Unsupported Media Type'],
  ['too-many', tooManyRequests('slow down', 7), 429, 'Too Many Requests'],
  ['unavailable', unavailable('down'), 503, 'Service Unavailable'],
  ['maybe-applied', unavailable('may still be applied', 5, '/Commands/abc'), 503, 'Service Unavailable'],
  ['internal', new DomainError('Internal', ['secret detail']), 500, 'Internal Server Error'],
];

function app() {
  const application = express();
  for (const [path, error] of KINDS) {
    application.get(`/${path}`, () => {
      throw error;
    });
  }
  application.get('/bad-token', (_req, _res, next) => next(unauthorized('The token has expired.', 'invalid_token')));
  application.post('/body', express.json({ limit: '10b' }), (_req, res) => {
    res.json({});
  });
  application.use(notFoundHandler);
  application.use(errorHandler);
  return application;
}

async function call(path: string, init?: RequestInit) {
  const server = app().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, init);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  } finally {
    server.close();
  }
}

test('each kind answers its status and title as an application/problem+json body', async (t) => {
  for (const [path, error, status, title] of KINDS) {
    const res = await call(`/${path}`);
    t.is(res.status, status, path);
    t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8', path);
    t.like(res.body, { type: 'about:blank', title, status }, path);
    if (error.kind === 'Internal') t.is(res.body.detail, 'An unexpected error occurred.');
    else if (error.kind === 'Validation') t.deepEqual(res.body.extensions, { errors: error.errors });
    else t.is(res.body.detail, error.errors[0], path);
  }
});

test('headers belong to the kinds that carry them, and only to those', async (t) => {
  const header = async (path: string, name: string) => (await call(path)).headers.get(name);
  t.is(await header('/too-many', 'retry-after'), '7');
  t.is(await header('/unavailable', 'retry-after'), '5');
  t.is(await header('/method', 'allow'), 'GET');
  t.is(await header('/maybe-applied', 'location'), '/Commands/abc');
  t.is(await header('/unavailable', 'location'), null);
  t.is(await header('/unauthorized', 'www-authenticate'), 'Bearer realm="emapi"');
  t.is(
    await header('/bad-token', 'www-authenticate'),
    'Bearer realm="emapi", error="invalid_token", error_description="The token has expired."',
  );
  for (const name of ['retry-after', 'allow', 'www-authenticate']) t.is(await header('/forbidden', name), null, name);
});

test('middleware client errors and unknown routes become their kinds', async (t) => {
  const json = { method: 'POST', headers: { 'content-type': 'application/json' } };
  t.deepEqual((await call('/body', { ...json, body: '{' })).body, {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: 'The request body is not valid JSON.',
  });
  t.like((await call('/body', { ...json, body: '"0123456789"' })).body, { status: 413, title: 'Payload Too Large' });
  t.deepEqual((await call('/nowhere')).body, {
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    detail: 'No resource at GET /nowhere.',
  });
});

test('a failure survives the queue: toFailure and DomainError.from keep kind, messages and details', (t) => {
  for (const [, error] of KINDS) {
    const failure = JSON.parse(JSON.stringify(error.toFailure())) as ReturnType<DomainError['toFailure']>;
    const back = DomainError.from(failure);
    t.deepEqual(back.toFailure(), error.toFailure());
    t.is(back.name, `${error.kind}Error`);
  }
  t.deepEqual(notFound('gone').toFailure(), { kind: 'NotFound', errors: ['gone'] });
  t.deepEqual(unauthorized('bad', 'invalid_token').toFailure(), {
    kind: 'Unauthorized',
    errors: ['bad'],
    tokenError: 'invalid_token',
  });
});
