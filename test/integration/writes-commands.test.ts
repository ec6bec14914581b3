import test from 'ava';
import { SignJWT } from 'jose';
import { encodeId } from '../../domain/ids/id-codec';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { bearer } from '../support/jwks-server';
import { startStack, type Stack } from '../support/stack';
import { idFromLocation, waitFor } from '../support/writes';

/**
 * A command still running after COMMAND_TIMEOUT_MS is not a failure (DESIGN §6, §10): 202 with
 * `Location: /Commands/<id>`, where the caller who sent it (and nobody else) can follow it.
 */

const AUTH = {
  AUTH_SECRET: 'a-secret-for-the-commands-test-of-32+-bytes',
  AUTH_ISSUER: 'http://localhost/',
  AUTH_AUDIENCE: 'emapi-commands-test',
};

let stack: Stack;
test.before(async () => {
  // No command worker at first, and a deadline nothing can meet: every write answers 202.
  stack = await startStack({ workers: [], env: { ...AUTH, COMMAND_TIMEOUT_MS: '1' } });
});
test.after.always(async () => {
  await stack?.close();
});

async function as(subject: string): Promise<Record<string, string>> {
  const token = await new SignJWT({ iss: AUTH.AUTH_ISSUER, aud: AUTH.AUTH_AUDIENCE, sub: subject, roles: ['User'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(AUTH.AUTH_SECRET));
  return bearer(token);
}

type State = { Id: string; State: string; Location?: string; Problem?: unknown };

/** Follows a command until it is no longer Pending. */
function settled(location: string, headers: Record<string, string>): Promise<State> {
  return waitFor(async () => {
    const res = await stack.get(location, headers);
    if (res.status !== 200) throw new Error(`GET ${location} answered ${res.status}: ${res.text}`);
    const body = res.body as State;
    return body.State === 'Pending' ? undefined : body;
  });
}

test.serial(
  '202 + /Commands/<id>: Pending, then Succeeded with the entity Location or Failed with its problem',
  async (t) => {
    const alice = await as('alice');
    const bob = await as('bob');

    const accepted = await stack.request('POST', '/Schemes', { body: { SchemeName: 'Eventually' }, headers: alice });
    t.is(accepted.status, 202, accepted.text);
    const location = accepted.headers.get('location')!;
    t.regex(location, /^\/Commands\/[0-9a-f-]{36}$/);
    const commandId = location.slice('/Commands/'.length);
    t.deepEqual(accepted.body, { Id: commandId, State: 'Pending' });
    t.deepEqual((await stack.get(location, alice)).body, { Id: commandId, State: 'Pending' });

    const missing = encodeId('Address', 999_999);
    const failing = await stack.request('POST', '/Schemes', {
      body: { SchemeName: 'Never', Address: { Id: missing } },
      headers: alice,
    });
    t.is(failing.status, 202);
    const deleting = await stack.request('DELETE', `/Schemes/${encodeId('Scheme', 999_999)}`, { headers: alice });
    t.is(deleting.status, 202);

    // Someone else's command, an unknown id and a malformed one all look the same: 404.
    for (const [path, who] of [
      [location, bob],
      [`/Commands/${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`, alice],
      ['/Commands/not-a-command', alice],
    ] as const) {
      const res = await stack.get(path, who);
      t.is(res.status, 404, path);
      t.like(res.body as object, { type: 'about:blank', title: 'Not Found', status: 404 });
    }

    const worker = await startCommandWorker(stack.config);
    t.teardown(() => worker.close());
    const done = await settled(location, alice);
    t.is(done.State, 'Succeeded');
    t.regex(done.Location ?? '', /^\/Schemes\/[A-Za-z0-9_-]{6}$/);
    t.like((await stack.get(done.Location!, alice)).body as object, { SchemeName: 'Eventually' });

    const failed = await settled(failing.headers.get('location')!, alice);
    t.deepEqual(failed, {
      Id: idFromLocation(failing),
      State: 'Failed',
      Problem: {
        type: 'about:blank',
        title: 'Validation Failed',
        status: 400,
        extensions: { errors: [`Scheme.Address.Id: Address '${missing}' does not exist`] },
      },
    });
    const notFound = await settled(deleting.headers.get('location')!, alice);
    t.like(notFound, { State: 'Failed', Problem: { title: 'Not Found', status: 404 } });
    // Finished commands stay private too.
    t.is((await stack.get(location, bob)).status, 404);
  },
);

test.serial('a successful delete that finished late has no Location', async (t) => {
  const alice = await as('alice');
  const worker = await startCommandWorker(stack.config);
  t.teardown(() => worker.close());
  const created = await stack.request('POST', '/Companies', { body: { Name: 'Short lived' }, headers: alice });
  const createdState = await settled(created.headers.get('location')!, alice);
  t.is(createdState.State, 'Succeeded');
  const deleting = await stack.request('DELETE', createdState.Location!, { headers: alice });
  t.is(deleting.status, 202);
  const deleted = await settled(deleting.headers.get('location')!, alice);
  t.deepEqual(deleted, { Id: idFromLocation(deleting), State: 'Succeeded' });
});
