import test from 'ava';
import { startStack, type Stack } from '../support/stack';
import { bearer, startIdentityProvider, type IdentityProvider } from '../support/jwks-server';
import { assertForbidden } from '../support/auth';

/** /Roles, /Roles/Available and the role grants the service keeps (/Roles/Assignments). */

let idp: IdentityProvider;
let stack: Stack;
let admin: Record<string, string>;
test.before(async () => {
  idp = await startIdentityProvider();
  stack = await startStack({ workers: [], env: idp.env.explicit });
  admin = bearer(await idp.token({ claims: { sub: 'ada', roles: ['Admin'] } }));
});
test.after.always(async () => {
  await stack?.close();
  await idp?.close();
});

interface Assignment {
  Id: string;
  Subject: string;
  Role: string;
  CreatedAt: string;
  CreatedBy: string;
}

const grant = (Subject: unknown, Role: unknown) =>
  stack.request('POST', '/Roles/Assignments', { body: { Subject, Role }, headers: admin });

test('GET /Roles/Available lists the roles the service knows', async (t) => {
  const res = await stack.get('/Roles/Available', admin);
  t.is(res.status, 200);
  const roles = res.body as { Name: string; Description: string }[];
  t.deepEqual(
    roles.map((r) => r.Name),
    ['User', 'Admin'],
  );
  t.true(roles.every((r) => typeof r.Description === 'string' && r.Description.length > 0));
});

test('a subject without a role claim, granted User, can then read; revoked, it cannot', async (t) => {
  const carol = bearer(await idp.token({ claims: { sub: 'carol' } }));
  assertForbidden(t, await stack.get('/Schemes', carol));

  const created = await grant('carol', 'User');
  t.is(created.status, 201, created.text);
  const assignment = created.body as Assignment;
  t.is(created.headers.get('location'), `/Roles/Assignments/${assignment.Id}`);
  t.like(assignment, { Subject: 'carol', Role: 'User', CreatedBy: 'ada' });
  t.regex(assignment.Id, /^[A-Za-z0-9_-]{6}$/);
  t.false(Number.isNaN(Date.parse(assignment.CreatedAt)));

  t.is((await stack.get('/Schemes', carol)).status, 200);
  t.deepEqual((await stack.get('/Roles', carol)).body, { Subject: 'carol', Roles: ['User'] });
  assertForbidden(t, await stack.get('/Jobs', carol));

  const one = await stack.get(`/Roles/Assignments/${assignment.Id}`, admin);
  t.deepEqual(one.body, assignment);

  const removed = await stack.request('DELETE', `/Roles/Assignments/${assignment.Id}`, { headers: admin });
  t.is(removed.status, 204);
  assertForbidden(t, await stack.get('/Schemes', carol));
  t.is((await stack.get(`/Roles/Assignments/${assignment.Id}`, admin)).status, 404);
  t.is((await stack.request('DELETE', `/Roles/Assignments/${assignment.Id}`, { headers: admin })).status, 404);
});

test('grants add to the token claim; a granted Admin reaches admin routes', async (t) => {
  const dave = bearer(await idp.token({ claims: { sub: 'dave', roles: 'User' } }));
  assertForbidden(t, await stack.get('/Jobs', dave));
  t.is((await grant('dave', 'Admin')).status, 201);
  t.deepEqual((await stack.get('/Roles', dave)).body, { Subject: 'dave', Roles: ['User', 'Admin'] });
  t.is((await stack.get('/Jobs', dave)).status, 200);
});

test('a duplicate grant is 409 Conflict', async (t) => {
  t.is((await grant('erin', 'User')).status, 201);
  const dup = await grant('erin', 'User');
  t.is(dup.status, 409);
  t.deepEqual(dup.body, {
    type: 'about:blank',
    title: 'Conflict',
    status: 409,
    detail: "RoleAssignment: 'erin' already holds the role User",
    extensions: { errors: ["RoleAssignment: 'erin' already holds the role User"] },
  });
  t.is((await grant('erin', 'Admin')).status, 201); // another role is another grant
});

test('invalid bodies are 400 Validation Failed naming each field', async (t) => {
  const cases: [unknown, string[]][] = [
    [{}, ['RoleAssignment.Subject: is required', 'RoleAssignment.Role: is required']],
    [{ Subject: 'x', Role: 'user' }, ['RoleAssignment.Role: must be one of User, Admin']],
    [{ Subject: 7, Role: 'User' }, ['RoleAssignment.Subject: must be a string']],
    [{ Subject: '   ', Role: 'User' }, ['RoleAssignment.Subject: must not be blank']],
    [{ Subject: 'x'.repeat(256), Role: 'User' }, ['RoleAssignment.Subject: must be at most 255 characters']],
    [{ Subject: 'x', Role: 'User', Extra: 1 }, ['RoleAssignment.Extra: is not a known field']],
    [['x'], ['RoleAssignment: must be a JSON object with Subject and Role']],
  ];
  for (const [body, errors] of cases) {
    const res = await stack.request('POST', '/Roles/Assignments', { body, headers: admin });
    t.is(res.status, 400, JSON.stringify(body));
    t.deepEqual(res.body, { type: 'about:blank', title: 'Validation Failed', status: 400, extensions: { errors } });
  }
});

test('read-only members sent back from a GET are ignored', async (t) => {
  const res = await stack.request('POST', '/Roles/Assignments', {
    body: { Id: 'AAAAAA', Subject: 'frank', Role: 'User', CreatedAt: 'x', CreatedBy: 'y' },
    headers: admin,
  });
  t.is(res.status, 201);
  t.like(res.body as object, { Subject: 'frank', CreatedBy: 'ada' });
});

test('malformed JSON, other media types and unknown keys are problems', async (t) => {
  const bad = await stack.request('POST', '/Roles/Assignments', {
    raw: '{"Subject":',
    headers: { ...admin, 'content-type': 'application/json' },
  });
  t.is(bad.status, 400);
  t.like(bad.body as object, { title: 'Bad Request' });
  const text = await stack.request('POST', '/Roles/Assignments', {
    raw: 'Subject=x',
    headers: { ...admin, 'content-type': 'text/plain' },
  });
  t.is(text.status, 415);
  t.like(text.body as object, { title: 'Unsupported Media Type' });
  for (const key of ['nope', '1234567', 'AAAAAA==x']) {
    const res = await stack.get(`/Roles/Assignments/${key}`, admin);
    t.is(res.status, 404);
    t.like(res.body as object, { title: 'Not Found', detail: `RoleAssignment '${key}' does not exist.` });
  }
});

test('assignments list, filtered by subject or role', async (t) => {
  await grant('gina', 'User');
  await grant('gina', 'Admin');
  await grant('hal', 'User');
  const gina = (await stack.get('/Roles/Assignments?subject=gina', admin)).body as Assignment[];
  t.deepEqual(gina.map((a) => a.Role).sort(), ['Admin', 'User']);
  const all = (await stack.get('/Roles/Assignments', admin)).body as Assignment[];
  t.true(all.some((a) => a.Subject === 'hal'));
  const admins = (await stack.get('/Roles/Assignments?role=Admin', admin)).body as Assignment[];
  t.true(admins.every((a) => a.Role === 'Admin'));
  t.true(admins.some((a) => a.Subject === 'gina'));
  const badRole = await stack.get('/Roles/Assignments?role=Root', admin);
  t.is(badRole.status, 400);
  t.is((await stack.get('/Roles/Assignments?who=gina', admin)).status, 400);
});

test('subjects are opaque: provider ids with | and @ work end to end', async (t) => {
  const subject = 'auth0|5f1c@example';
  t.is((await grant(subject, 'User')).status, 201);
  const token = bearer(await idp.token({ claims: { sub: subject } }));
  t.is((await stack.get('/Schemes', token)).status, 200);
  const listed = (await stack.get(`/Roles/Assignments?subject=${encodeURIComponent(subject)}`, admin)).body;
  t.is((listed as Assignment[]).length, 1);
});
