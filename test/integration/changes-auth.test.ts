import test, { type ExecutionContext } from 'ava';
import { ROLE_REVOKED, TOKEN_EXPIRED } from '../../api/changes/change-feed';
import { signToken, settingsFromEnv } from '../../scripts/token';
import { startStack, type Stack } from '../support/stack';
import { idFromLocation } from '../support/writes';
import { bearer } from '../support/jwks-server';
import { isStream, openSse, type SseStream } from '../support/sse-client';

// GET /Changes does not outlive its caller's right to read (issue 24, finding 5): a stream ends when
// its token expires, and when the caller's role grant is revoked (re-checked every
// CHANGES_ROLE_RECHECK_MS), each with a last comment; a fresh token resumes by Last-Event-ID.

const ENV = {
  AUTH_SECRET: 'a-local-secret-of-more-than-32-bytes!',
  AUTH_ISSUER: 'http://localhost/',
  AUTH_AUDIENCE: 'emapi-local',
  CHANGES_HEARTBEAT_MS: '300',
  // Short here so a revocation shows within the test; 60 s by default.
  CHANGES_ROLE_RECHECK_MS: '300',
};
const settings = settingsFromEnv(ENV);
const token = (subject: string, roles: string[], ttlSeconds = 300) =>
  bearer(signToken({ roles, subject, ttlSeconds }, settings));

let stack: Stack;
let admin: Record<string, string>;
test.before(async () => {
  stack = await startStack({ env: ENV });
  admin = token('ada', ['Admin']);
});
test.after.always(async () => {
  await stack?.close();
});

async function open(t: ExecutionContext, headers: Record<string, string>): Promise<SseStream> {
  const answer = await openSse(stack.baseUrl, '/Changes', headers);
  if (!isStream(answer)) throw new Error(`GET /Changes answered ${answer.status}: ${answer.text}`);
  t.teardown(() => answer.close());
  await answer.waitUntil(() => answer.retry !== undefined);
  return answer;
}

async function createScheme(name: string): Promise<string> {
  const res = await stack.request('POST', '/Schemes', { body: { SchemeName: name }, headers: admin });
  if (res.status !== 201) throw new Error(`POST /Schemes answered ${res.status}: ${res.text}`);
  return idFromLocation(res);
}

/** The stream's events about `entityId`. */
const about = (stream: SseStream, entityId: string) =>
  stream.events.filter((e) => (JSON.parse(e.data) as { EntityId?: string }).EntityId === entityId);

test.serial(
  'a stream ends when its token expires, with a last comment; a fresh token resumes by Last-Event-ID',
  async (t) => {
    const shortLived = token('sam', ['User'], 3);
    const stream = await open(t, shortLived);
    const before = await createScheme('Before expiry');
    await stream.waitUntil(() => about(stream, before).length === 1);

    await stream.waitUntil(() => stream.ended, 15_000);
    t.is(stream.comments.at(-1), TOKEN_EXPIRED);
    t.true(stream.raw().endsWith(`: ${TOKEN_EXPIRED}\n\n`), 'the comment is the last thing written');

    // Committed after the end: this stream cannot carry it; a reconnection with a fresh token does.
    const after = await createScheme('After expiry');
    t.is(about(stream, after).length, 0);
    const lastId = stream.events.at(-1)!.id!;
    const resumed = await open(t, { ...token('sam', ['User']), 'Last-Event-ID': lastId });
    await resumed.waitUntil(() => about(resumed, after).length >= 1);
    t.is(about(resumed, before).length, 0, 'nothing up to Last-Event-ID is sent again');
    t.is(about(resumed, after).filter((e) => e.event === 'SchemeCreated').length, 1);
    t.false(resumed.ended);
  },
);

test.serial('a stream whose caller’s role grant is revoked ends within CHANGES_ROLE_RECHECK_MS', async (t) => {
  // rita's token claims no role: she reads only through the grant the service keeps.
  const granted = await stack.request('POST', '/Roles/Assignments', {
    body: { Subject: 'rita', Role: 'User' },
    headers: admin,
  });
  t.is(granted.status, 201, granted.text);
  const rita = await open(t, token('rita', []));
  const other = await open(t, token('otto', ['User']));
  const first = await createScheme('Seen by both');
  await rita.waitUntil(() => about(rita, first).length === 1);

  const revoked = await stack.request('DELETE', `/Roles/Assignments/${(granted.body as { Id: string }).Id}`, {
    headers: admin,
  });
  t.is(revoked.status, 204, revoked.text);
  await rita.waitUntil(() => rita.ended, 15_000);
  t.is(rita.comments.at(-1), ROLE_REVOKED);

  // Another caller, whose role stands, goes on receiving.
  const second = await createScheme('Seen by otto only');
  await other.waitUntil(() => about(other, second).length === 1);
  t.false(other.ended);
  t.is(about(rita, second).length, 0);
});
