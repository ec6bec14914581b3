import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { Writable } from 'node:stream';
import { startStack, type HttpResult, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertForbidden, assertUnauthorized } from '../support/auth';
import { JSON_PATCH, patch } from '../support/writes';
import { redisHolds } from '../support/webhook-receiver';

/**
 * `/Subscriptions` (DESIGN §16) as a resource: create (the secret shown once), read, patch, delete,
 * validation naming the field, the private-network guard on writes (WEBHOOK_ALLOW_PRIVATE_NETWORKS
 * is off here), the subscription limit, the AdminOnly policy, and fast-check properties over POST
 * bodies and PATCH documents (never a 5xx, never the secret).
 */

const PUBLIC_URL = 'http://93.184.215.14/hooks/emapi'; // a public literal address: no DNS needed
const MAX_SUBSCRIPTIONS = 6;

let stack: Stack;
let idp: IdentityProvider;
let authStack: Stack;
let apiLog = '';

test.before(async () => {
  idp = await startIdentityProvider();
  [stack, authStack] = await Promise.all([
    startStack({
      env: { WEBHOOK_MAX_SUBSCRIPTIONS: String(MAX_SUBSCRIPTIONS), LOG_LEVEL: 'info' },
      logDestination: new Writable({
        write(chunk: Buffer, _encoding, callback) {
          apiLog += chunk.toString();
          callback();
        },
      }),
    }),
    startStack({ workers: [], env: idp.env.explicit }),
  ]);
});
test.after.always(async () => {
  await Promise.allSettled([stack?.close(), authStack?.close()]);
  await idp?.close();
});

interface Subscription {
  Id: string;
  Url: string;
  Events: string[];
  Description: string | null;
  Active: boolean;
  CreatedAt: string;
  UpdatedAt: string;
  Secret?: string;
}

const post = (body: unknown) => stack.request('POST', '/Subscriptions', { body });

async function subscribe(t: ExecutionContext, body: Record<string, unknown>): Promise<Subscription> {
  const res = await post(body);
  t.is(res.status, 201, res.text);
  return res.body as Subscription;
}

async function removeAll(): Promise<void> {
  const list = (await stack.get('/Subscriptions?$top=1000')).body as Subscription[];
  for (const s of list) await stack.request('DELETE', `/Subscriptions/${s.Id}`);
}

function assertValidation(t: ExecutionContext, res: HttpResult, pattern: RegExp): void {
  t.is(res.status, 400, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  const errors = (res.body as { extensions?: { errors?: string[] } }).extensions?.errors ?? [];
  t.true(
    errors.some((e) => pattern.test(e)),
    `${pattern} in ${JSON.stringify(errors)}`,
  );
}

test.serial('POST creates a subscription and shows its secret once; GET never does', async (t) => {
  const res = await post({ Url: PUBLIC_URL, Events: ['SchemeCreated', 'Company*'], Description: 'CRM sync' });
  t.is(res.status, 201, res.text);
  const created = res.body as Subscription;
  t.regex(created.Secret ?? '', /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(Buffer.from(created.Secret!.slice('whsec_'.length), 'base64').length, 32);
  t.is(res.headers.get('location'), `/Subscriptions/${created.Id}`);
  t.truthy(res.headers.get('etag'));
  t.like(created, { Url: PUBLIC_URL, Events: ['SchemeCreated', 'Company*'], Description: 'CRM sync', Active: true });

  const one = await stack.get(`/Subscriptions/${created.Id}`);
  t.is(one.status, 200, one.text);
  const { Secret: _secret, ...shown } = created;
  t.deepEqual(one.body, shown);
  t.is(one.headers.get('etag'), res.headers.get('etag'));
  const list = await stack.get('/Subscriptions?$count=true');
  t.is(list.status, 200);
  t.true((list.body as Subscription[]).some((s) => s.Id === created.Id));
  t.true(Number(list.headers.get('x-total-count')) >= 1);
  for (const text of [one.text, list.text]) t.false(text.includes(created.Secret!));

  // The secret is the row's, and nothing in Redis (jobs, their results, event streams) or the API log holds it.
  const row = (await stack.knex('webhook_subscriptions').where('url', PUBLIC_URL).first()) as { secret: string };
  t.is(row.secret, created.Secret!);
  t.false(await redisHolds(stack, created.Secret!), 'the secret is nowhere in Redis');
  t.false(apiLog.includes(created.Secret!), 'the secret is not in the API log');
  t.true(apiLog.length > 0, 'the API log was read');
  await removeAll();
});

test.serial('PATCH changes Url, Events and Active only; If-Match; the answer carries no secret', async (t) => {
  const created = await subscribe(t, { Url: PUBLIC_URL, Events: ['*'] });
  const before = await stack.get(`/Subscriptions/${created.Id}`);
  const res = await patch(stack, `/Subscriptions/${created.Id}`, [
    { op: 'replace', path: '/Active', value: false },
    { op: 'add', path: '/Events/-', value: 'SchemeDeleted' },
    { op: 'replace', path: '/Url', value: 'https://93.184.215.14/other' },
  ]);
  t.is(res.status, 200, res.text);
  t.like(res.body as object, { Active: false, Events: ['*', 'SchemeDeleted'], Url: 'https://93.184.215.14/other' });
  t.false('Secret' in (res.body as object));
  t.false(res.text.includes(created.Secret!));
  t.not(res.headers.get('etag'), before.headers.get('etag'));

  const stale = await patch(stack, `/Subscriptions/${created.Id}`, [{ op: 'replace', path: '/Active', value: true }], {
    'if-match': before.headers.get('etag')!,
  });
  t.is(stale.status, 412, stale.text);
  const current = await patch(
    stack,
    `/Subscriptions/${created.Id}`,
    [{ op: 'replace', path: '/Active', value: true }],
    {
      'if-match': res.headers.get('etag')!,
    },
  );
  t.is(current.status, 200, current.text);

  assertValidation(
    t,
    await patch(stack, `/Subscriptions/${created.Id}`, [{ op: 'replace', path: '/Description', value: 'x' }]),
    /^Subscription\.Description: cannot be patched/,
  );
  assertValidation(
    t,
    await patch(stack, `/Subscriptions/${created.Id}`, [{ op: 'replace', path: '/Events', value: [] }]),
    /^Subscription\.Events: must name at least one/,
  );
  assertValidation(
    t,
    await patch(stack, `/Subscriptions/${created.Id}`, [{ op: 'replace', path: '/Events/0', value: 'SchemeCreatd' }]),
    /^Subscription\.Events\[0\]: "SchemeCreatd" is not an event type/,
  );
  const test409 = await patch(stack, `/Subscriptions/${created.Id}`, [{ op: 'test', path: '/Active', value: false }]);
  t.is(test409.status, 409, test409.text);
  const wrongType = await stack.request('PATCH', `/Subscriptions/${created.Id}`, {
    body: [{ op: 'replace', path: '/Active', value: false }],
  });
  t.is(wrongType.status, 415, wrongType.text);
  const absent = await patch(stack, '/Subscriptions/AAAAAA', [{ op: 'replace', path: '/Active', value: false }]);
  t.is(absent.status, 404, absent.text);
  await removeAll();
});

test.serial('DELETE removes it (and its deliveries); then 404', async (t) => {
  const created = await subscribe(t, { Url: PUBLIC_URL, Events: ['Scheme*'] });
  const deliveries = await stack.get(`/Subscriptions/${created.Id}/Deliveries`);
  t.is(deliveries.status, 200, deliveries.text);
  t.deepEqual(deliveries.body, []);
  t.is((await stack.get(`/Subscriptions/${created.Id}/Deliveries?$top=x`)).status, 400);
  t.is((await stack.get(`/Subscriptions/${created.Id}/Deliveries?$count=true`)).status, 400);
  const removed = await stack.request('DELETE', `/Subscriptions/${created.Id}`);
  t.is(removed.status, 204, removed.text);
  t.is((await stack.get(`/Subscriptions/${created.Id}`)).status, 404);
  t.is((await stack.get(`/Subscriptions/${created.Id}/Deliveries`)).status, 404);
  t.is((await stack.request('DELETE', `/Subscriptions/${created.Id}`)).status, 404);
  t.is((await stack.get('/Subscriptions/not-an-id')).status, 404);
  t.is((await stack.get('/Subscriptions?$top=-1')).status, 400);
  t.is((await stack.get('/Subscriptions?$filter=x')).status, 400);
});

test.serial('bad bodies are 400 problems naming the field', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ Url: PUBLIC_URL, Events: ['SchemeCreatd'] }, /^Subscription\.Events\[0\]: "SchemeCreatd" is not an event type/],
    [{ Url: PUBLIC_URL, Events: [] }, /^Subscription\.Events: must name at least one/],
    [{ Url: PUBLIC_URL }, /^Subscription\.Events: is required/],
    [{ Url: PUBLIC_URL, Events: ['Sch*eme'] }, /^Subscription\.Events\[0\]: .*`\*` may only end a pattern/],
    [{ Url: PUBLIC_URL, Events: ['Nothing*'] }, /^Subscription\.Events\[0\]: "Nothing\*" matches no event type/],
    [{ Url: PUBLIC_URL, Events: Array(51).fill('*') }, /^Subscription\.Events: at most 50 patterns/],
    [{ Events: ['*'] }, /^Subscription\.Url: is required/],
    [{ Url: 'ftp://93.184.215.14/x', Events: ['*'] }, /^Subscription\.Url: must be an http or https URL/],
    [{ Url: 'http://user:pw@93.184.215.14/x', Events: ['*'] }, /^Subscription\.Url: must not carry credentials/],
    [{ Url: `http://93.184.215.14/${'a'.repeat(2100)}`, Events: ['*'] }, /^Subscription\.Url: must be at most 2048/],
    [{ Url: 'not a url', Events: ['*'] }, /^Subscription\.Url: "not a url" is not an absolute URL/],
    [{ Url: PUBLIC_URL, Events: ['*'], Description: 'd'.repeat(1001) }, /^Subscription\.Description: must be at most/],
    [{ Url: PUBLIC_URL, Events: ['*'], Active: 'yes' }, /^Subscription\.Active: must be true or false/],
    [{ Url: PUBLIC_URL, Events: ['*'], Secret: 'whsec_mine' }, /^Subscription\.Secret: is not a known field/],
    [[], /^Subscription: must be a JSON object/],
  ];
  for (const [body, pattern] of cases) assertValidation(t, await post(body), pattern);
  const text = await stack.request('POST', '/Subscriptions', { raw: 'x', headers: { 'content-type': 'text/plain' } });
  t.is(text.status, 415, text.text);
});

test.serial(
  'the private-network guard refuses loopback, private and link-local targets (400 naming Url)',
  async (t) => {
    const refused = [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://[::1]/hook',
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:127.0.0.1]/hook',
      'http://192.168.1.10/hook',
      'http://100.64.0.1/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://0.0.0.0/hook',
      'http://2130706433/hook',
    ];
    for (const Url of refused) {
      const res = await post({ Url, Events: ['*'] });
      assertValidation(t, res, /^Subscription\.Url: (refused: .+ address|host .+ does not resolve)/);
    }
    const created = await subscribe(t, { Url: PUBLIC_URL, Events: ['*'] });
    assertValidation(
      t,
      await patch(stack, `/Subscriptions/${created.Id}`, [
        { op: 'replace', path: '/Url', value: 'http://127.0.0.1/x' },
      ]),
      /^Subscription\.Url: refused: 127\.0\.0\.1, a loopback address/,
    );
    t.is(((await stack.get(`/Subscriptions/${created.Id}`)).body as Subscription).Url, PUBLIC_URL, 'unchanged');
    await removeAll();
  },
);

test.serial('at most WEBHOOK_MAX_SUBSCRIPTIONS subscriptions (409 naming it)', async (t) => {
  await removeAll();
  for (let i = 0; i < MAX_SUBSCRIPTIONS; i++) await subscribe(t, { Url: `${PUBLIC_URL}/${i}`, Events: ['*'] });
  const over = await post({ Url: PUBLIC_URL, Events: ['*'] });
  t.is(over.status, 409, over.text);
  t.regex(over.text, /WEBHOOK_MAX_SUBSCRIPTIONS/);
  await removeAll();
});

test.serial('AdminOnly: 401 without a token, 403 for a User', async (t) => {
  const user = bearer(await idp.token({ claims: { sub: 'uma', roles: ['User'] } }));
  const admin = bearer(await idp.token({ claims: { sub: 'ada', roles: ['Admin'] } }));
  assertUnauthorized(t, await authStack.get('/Subscriptions'));
  assertUnauthorized(
    t,
    await authStack.request('POST', '/Subscriptions', { body: { Url: PUBLIC_URL, Events: ['*'] } }),
  );
  assertForbidden(t, await authStack.get('/Subscriptions', user));
  assertForbidden(t, await authStack.get('/Subscriptions/AAAAAA/Deliveries', user));
  assertForbidden(
    t,
    await authStack.request('POST', '/Subscriptions', { body: { Url: PUBLIC_URL, Events: ['*'] }, headers: user }),
  );
  assertForbidden(
    t,
    await authStack.request('PATCH', '/Subscriptions/AAAAAA', {
      raw: '[]',
      headers: { ...user, ...JSON_PATCH },
    }),
  );
  assertForbidden(t, await authStack.request('DELETE', '/Subscriptions/AAAAAA', { headers: user }));
  const listed = await authStack.get('/Subscriptions', admin);
  t.is(listed.status, 200, listed.text);
});

const LEAK =
  /whsec_|\bat [\w.<>]+ \(|\.(?:js|ts):\d+|node_modules|\/work\/|\bselect\b.+\bfrom\b|\binsert into\b|knex|bullmq|ioredis|TypeError|undefined/i;

const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('\u0000', '\ud800', '', '*', 'Scheme*', 'SchemeCreated', 'Sch*', '__proto__', 'constructor'),
);
const url = fc.oneof(
  fc.constantFrom(
    PUBLIC_URL,
    'http://127.0.0.1/',
    'http://[::1]/',
    'https://93.184.215.14:0/',
    'http://a:b@93.184.215.14/',
    'javascript:alert(1)',
    'http://93.184.215.14/\u0000',
    'http://%zz/',
    'http://[::ffff:10.0.0.1]/',
  ),
  fc.webUrl(),
  text,
);
const value = fc.oneof(text, url, fc.integer(), fc.boolean(), fc.constant(null), fc.array(text, { maxLength: 3 }));
const body = fc.oneof(
  fc.record(
    {
      Url: url,
      Events: fc.oneof(fc.array(text, { maxLength: 4 }), value),
      Description: fc.oneof(text, value),
      Active: value,
      Id: value,
      Secret: value,
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(text, value, { maxKeys: 3 }),
  value,
);

function assertHealthy(res: HttpResult): void {
  if (res.status >= 500) throw new Error(`${res.status}: ${res.text}`);
  if (LEAK.test(res.text) && res.status !== 201) throw new Error(`leak in ${res.status}: ${res.text}`);
  if (res.status !== 201 && res.text.includes('Secret"')) throw new Error(`secret member in ${res.text}`);
}

test.serial('property: any POST body answers 201 or a 4xx problem, never a 5xx or a secret elsewhere', async (t) => {
  await removeAll();
  await fc.assert(
    fc.asyncProperty(body, async (sent) => {
      const res = await post(sent);
      assertHealthy(res);
      if (res.status === 201) {
        t.regex((res.body as Subscription).Secret ?? '', /^whsec_/);
        await stack.request('DELETE', `/Subscriptions/${(res.body as Subscription).Id}`);
      } else if (![400, 409].includes(res.status)) throw new Error(`${res.status}: ${res.text}`);
    }),
    { seed: 20261124, numRuns: Number(process.env.FUZZ_RUNS ?? 60) },
  );
  t.pass();
});

const pointer = fc.oneof(
  fc.constantFrom('/Url', '/Events', '/Events/0', '/Events/-', '/Events/9', '/Events/01', '/Active', '/Description'),
  fc.constantFrom('/Id', '/Secret', '', '/', '/Events/0/x', '/__proto__/x', '~2', '/Url/x'),
  text,
);
const operation = fc.record(
  {
    op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), text),
    path: pointer,
    from: pointer,
    value,
  },
  { requiredKeys: ['op'] },
);

test.serial('property: any PATCH document answers 200 or a 4xx problem, never a 5xx or the secret', async (t) => {
  await removeAll();
  const created = await subscribe(t, { Url: PUBLIC_URL, Events: ['*'] });
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.array(operation, { maxLength: 4 }), value), async (ops) => {
      const res = await patch(stack, `/Subscriptions/${created.Id}`, ops);
      assertHealthy(res);
      if (res.text.includes(created.Secret!)) throw new Error(`secret in ${res.text}`);
      if (![200, 400, 409].includes(res.status)) throw new Error(`${res.status}: ${res.text}`);
    }),
    { seed: 20261124, numRuns: Number(process.env.FUZZ_RUNS ?? 60) },
  );
  t.pass();
  await removeAll();
});
