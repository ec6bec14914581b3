import test from 'ava';
import { Writable } from 'node:stream';
import { startStack, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { eventually } from '../support/queues';

/**
 * The access log of the real API at LOG_LEVEL=info, read from its logger's output: one line per
 * request (never two), health probes quiet, and ACCESS_LOG=false turning it off.
 */

type Line = Record<string, unknown>;

function sink(): { lines: Line[]; stream: Writable } {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as Line);
      callback();
    },
  });
  return { lines, stream };
}

let idp: IdentityProvider;
let on: Stack;
let quiet: Stack;
const onLog = sink();
const quietLog = sink();
test.before(async () => {
  idp = await startIdentityProvider();
  [on, quiet] = await Promise.all([
    startStack({ workers: [], env: { ...idp.env.explicit, LOG_LEVEL: 'info' }, logDestination: onLog.stream }),
    startStack({
      workers: [],
      env: { ...idp.env.explicit, LOG_LEVEL: 'info', ACCESS_LOG: 'false' },
      logDestination: quietLog.stream,
    }),
  ]);
});
test.after.always(async () => {
  await Promise.all([on?.close(), quiet?.close()]);
  await idp?.close();
});

const completions = (lines: Line[], requestId: string) =>
  lines.filter((line) => line.requestId === requestId && line.msg === 'request completed');

test('one info line per request: method, URL without tokens, status, duration, request id and subject', async (t) => {
  const token = await idp.token({ claims: { sub: 'ada', roles: ['User'] } });
  await on.get('/health/ready', { 'x-request-id': 'probe-1' });
  await on.get(`/Schemes?$top=1&id_token=${token}`, { ...bearer(token), 'x-request-id': 'read-1' });
  await on.get('/Schemes', { 'x-request-id': 'anon-1' });
  const read = await eventually(async () => completions(onLog.lines, 'read-1')[0]);
  const anon = await eventually(async () => completions(onLog.lines, 'anon-1')[0]);

  t.like(read, { level: 30, method: 'GET', url: '/Schemes?$top=1&id_token=[redacted]', status: 200, subject: 'ada' });
  t.is(typeof read.durationMs, 'number');
  t.like(anon, { level: 30, method: 'GET', url: '/Schemes', status: 401 });
  t.is(anon.subject, undefined, 'no subject before authentication');
  t.false(JSON.stringify(onLog.lines).includes(token.split('.')[2]!), 'the token is in no line');

  // Never twice, and health probes stay quiet.
  t.is(completions(onLog.lines, 'read-1').length, 1);
  t.is(completions(onLog.lines, 'anon-1').length, 1);
  t.deepEqual(
    onLog.lines.filter((line) => line.requestId === 'probe-1'),
    [],
  );
});

test('ACCESS_LOG=false: no line for requests that succeed or fail with a 4xx', async (t) => {
  const token = await idp.token({ claims: { roles: ['User'] } });
  t.is((await quiet.get('/Schemes', { ...bearer(token), 'x-request-id': 'quiet-read' })).status, 200);
  t.is((await quiet.get('/Schemes', { 'x-request-id': 'quiet-anon' })).status, 401);
  // A control request on the logging stack, made after these: once its line is there, theirs
  // (were they written) would be too, each stack's logger writing as its requests finish.
  await on.get('/Schemes', { 'x-request-id': 'control-1' });
  await eventually(async () => completions(onLog.lines, 'control-1')[0]);
  t.deepEqual(
    quietLog.lines.filter((line) => line.msg === 'request completed'),
    [],
  );
  t.true(
    quietLog.lines.some((line) => line.level === 30),
    'the logger itself writes at info (the start-up lines)',
  );
});

test('query credentials are redacted by their decoded name, however spelled (issue 24)', async (t) => {
  const token = await idp.token({ claims: { sub: 'eve', roles: ['User'] } });
  const signature = token.split('.')[2]!;
  const spellings = ['%61ccess_token', 'access_token%00', 'access%5Ftoken', 'password', 'api_key', 'Client_Secret'];
  for (const [i, name] of spellings.entries()) {
    await on.get(`/Schemes?$top=1&${name}=${token}`, { ...bearer(token), 'x-request-id': `spelled-${i}` });
  }
  await on.get(`/Schemes?$top=1&%E0%A4%A=${token}`, { ...bearer(token), 'x-request-id': 'unparseable-1' });
  const lines = await Promise.all(
    [...spellings.map((_, i) => `spelled-${i}`), 'unparseable-1'].map((id) =>
      eventually(async () => completions(onLog.lines, id)[0]),
    ),
  );
  t.deepEqual(
    lines.map((line) => line.url),
    [...spellings.map((name) => `/Schemes?$top=1&${name}=[redacted]`), '/Schemes?[redacted]'],
  );
  t.false(JSON.stringify(onLog.lines).includes(signature), 'the token is in no line');
});
