import test from 'ava';
import { randomUUID } from 'node:crypto';
import { signCommand } from '../../domain/commands/command-signature';
import { idempotentCommandId } from '../../domain/writes/command-ids';
import type { Command } from '../../domain/commands/command';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { startCommandWorker } from '../../workers/commands/command-worker';
import { CuttableProxy } from '../support/cuttable-proxy';
import { TestQueues, eventually, testQueue } from '../support/queues';
import { startStack, type Stack } from '../support/stack';
import { assertProblem, create, patch, read } from '../support/writes';

/**
 * DESIGN §13 on the write side: text and numbers a column cannot hold, JSON Patch bounds, signed
 * commands, per-subject pending commands, and infrastructure failures that answer 503 and do not
 * become an Idempotency-Key's answer.
 */

let stack: Stack;
let workerDb: CuttableProxy;
test.before(async () => {
  workerDb = new CuttableProxy(new URL(process.env.TEST_TEMPLATE_DATABASE_URL!));
  await workerDb.open();
  stack = await startStack({
    env: { MAX_PATCHED_DOCUMENT_BYTES: '65536', COMMAND_TIMEOUT_MS: '20000' },
    // The command worker reaches Postgres through a proxy the test can cut; the API reads directly.
    workers: [
      (config) => {
        const url = new URL(config.databaseUrl);
        url.port = String(workerDb.port);
        return startCommandWorker({ ...config, databaseUrl: url.toString() });
      },
    ],
  });
});
test.after.always(async () => {
  await workerDb?.open().catch(() => undefined);
  await stack?.close();
  await workerDb?.cut();
});

const count = async (table: string, where: Record<string, unknown>) =>
  Number((await stack.knex(table).where(where).count({ n: '*' }))[0]!.n);

function raw(path: string, json: string, method = 'POST', contentType = 'application/json') {
  return stack.request(method, path, { raw: json, headers: { 'content-type': contentType } });
}

test('text with U+0000 or an unpaired surrogate is a 400 naming the field; nothing is stored', async (t) => {
  const nul = await raw('/Companies', '{"Name":"Nul\\u0000Holdings"}');
  assertProblem(t, nul, 400, 'Validation Failed', { errors: ['Company.Name: must not contain U+0000 (NUL)'] });
  const lone = await raw('/Companies', '{"Name":"Lone \\ud800x"}');
  assertProblem(t, lone, 400, 'Validation Failed', {
    errors: ['Company.Name: must not contain an unpaired UTF-16 surrogate'],
  });
  const deep = await raw('/Schemes', '{"SchemeName":"S","Notes":[{"Text":"ok"},{"Text":"bad\\udc00"}]}');
  assertProblem(t, deep, 400, 'Validation Failed', {
    errors: ['Scheme.Notes[1].Text: must not contain an unpaired UTF-16 surrogate'],
  });
  // A proper pair is text like any other, and is stored as sent (twice: the second POST is no 500).
  for (let i = 0; i < 2; i++) t.is((await raw('/Companies', '{"Name":"Pair \\ud83d\\ude00"}')).status, 201);
  t.is(await count('companies', { name: 'Pair \u{1F600}' }), 2);
  t.is(await count('companies', { name: 'Lone \ufffdx' }), 0);
});

test('numbers outside the column, 1e400, prototype-named members and deep nesting are 400s, never 500s', async (t) => {
  assertProblem(
    t,
    await raw('/Schemes', '{"SchemeName":"S","TotalUnits":99999999999999999999}'),
    400,
    'Validation Failed',
    {
      errors: ['Scheme.TotalUnits: must be between 0 and 2147483647'],
    },
  );
  assertProblem(t, await raw('/Schemes', '{"SchemeName":"S","TotalFloorArea":1e400}'), 400, 'Validation Failed', {
    errors: ['Scheme.TotalFloorArea: must be a finite number'],
  });
  for (const member of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    const res = await raw('/Companies', `{"Name":"P","${member}":{"Name":"x"}}`);
    t.is(res.status, 400, `${member}: ${res.text}`);
    t.regex(res.text, new RegExp(`Company\\.${member}`));
  }
  const nested = `{"SchemeName":"S","Notes":[{"Text":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}]}`;
  const deep = await raw('/Schemes', nested);
  t.is(deep.status, 400, deep.text.slice(0, 200));
  t.regex(deep.text, /nested deeper than 16 levels/);
  const date = await raw('/Schemes', '{"SchemeName":"S","CompletionDate":"0000-01-01"}');
  t.is(date.status, 400);
});

test('JSON Patch: more than MAX_PATCH_OPERATIONS operations is a 400 before anything is queued', async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Patch cap' });
  const ops = Array.from({ length: 101 }, () => ({ op: 'test', path: '/SchemeName', value: 'Patch cap' }));
  const res = await patch(stack, `/Schemes/${id}`, ops);
  assertProblem(t, res, 400, 'Bad Request', {
    detail: 'JSON Patch: 101 operations exceed the limit of 100 (MAX_PATCH_OPERATIONS).',
  });
  t.is((await patch(stack, `/Schemes/${id}`, ops.slice(0, 100))).status, 204);
});

test("the issue's attack: 22 copies of a whole collection is a 400 at once, and the next write is served", async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Copy bomb', Notes: [{ Text: 'x'.repeat(1000) }] });
  const bomb = Array.from({ length: 22 }, () => ({ op: 'copy', from: '/Notes', path: '/Notes/-' }));
  const res = await patch(stack, `/Schemes/${id}`, bomb);
  t.is(res.status, 400, res.text);
  t.regex(res.text, /cannot copy a whole collection or the whole document/);
  const root = await patch(stack, `/Schemes/${id}`, [{ op: 'move', from: '', path: '/Notes/-' }]);
  t.is(root.status, 400);
  t.is(
    (await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/SchemeName', value: 'Still fine' }])).status,
    204,
  );
  t.is((await read<{ SchemeName: string; Notes: unknown[] }>(stack, `/Schemes/${id}`)).Notes.length, 1);
});

test('the patched document is bounded while it is applied (MAX_PATCHED_DOCUMENT_BYTES); nothing is changed', async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Growing', Notes: [{ Text: 'y'.repeat(9000) }] });
  // Each copy of one 9 KB note is allowed; the eighth would pass 64 KiB.
  const ops = Array.from({ length: 20 }, () => ({ op: 'copy', from: '/Notes/0', path: '/Notes/-' }));
  const res = await patch(stack, `/Schemes/${id}`, ops);
  t.is(res.status, 400, res.text);
  t.regex(res.text, /larger than 65536 bytes \(MAX_PATCHED_DOCUMENT_BYTES\)/);
  t.is((await read<{ Notes: unknown[] }>(stack, `/Schemes/${id}`)).Notes.length, 1);
  t.is((await patch(stack, `/Schemes/${id}`, ops.slice(0, 3))).status, 204);
  t.is((await read<{ Notes: unknown[] }>(stack, `/Schemes/${id}`)).Notes.length, 4);
});

test('JSON Patch values with NUL are refused in the API, naming the operation', async (t) => {
  const id = await create(stack, 'Companies', { Name: 'Patched' });
  const res = await patch(stack, `/Companies/${id}`, [{ op: 'replace', path: '/Name', value: 'a\u0000b' }]);
  assertProblem(t, res, 400, 'Validation Failed', {
    errors: ['Company.Name: must not contain U+0000 (NUL) (operation 0)'],
  });
});

test.serial('a command written to the queue by hand is never applied; a signed one is', async (t) => {
  const queues = new TestQueues(stack.config);
  t.teardown(() => queues.close());
  const queue = queues.queue(QUEUE.commands);
  const events = await queues.queueEvents(QUEUE.commands);
  const forged: Command = {
    commandId: randomUUID(),
    name: 'create',
    entity: 'Country',
    body: { Name: 'Forged', IsoCode: 'FG' },
    subject: 'someone-who-never-called',
    issuedAt: new Date().toISOString(),
  };
  const job = await queue.add('create', forged, { jobId: forged.commandId, attempts: 3 });
  await t.throwsAsync(job.waitUntilFinished(events, 10_000), { message: /not signed with this deployment/ });
  t.is(await count('countries', { iso_code: 'FG' }), 0);
  t.is((await queue.getJob(forged.commandId))?.attemptsMade, 1, 'refused once, not retried');
  // Signed with another key: the same.
  const otherKey = { ...forged, commandId: randomUUID() };
  const wrong = await queue.add('create', signCommand(otherKey, 'x'.repeat(40)), { jobId: otherKey.commandId });
  await t.throwsAsync(wrong.waitUntilFinished(events, 10_000));
  // Signed, then altered: the same.
  const altered = { ...signCommand({ ...forged, commandId: randomUUID() }, stack.config.commandSigningKey) };
  altered.subject = 'admin';
  const tampered = await queue.add('create', altered, { jobId: altered.commandId });
  await t.throwsAsync(tampered.waitUntilFinished(events, 10_000));
  t.is(await count('countries', { iso_code: 'FG' }), 0);
  const good = { ...forged, commandId: randomUUID() };
  const signed = await queue.add('create', signCommand(good, stack.config.commandSigningKey), {
    jobId: good.commandId,
  });
  t.like(await signed.waitUntilFinished(events, 10_000), { ok: true });
  t.is(await count('countries', { iso_code: 'FG' }), 1);
});

test.serial(
  'a store failing under a command answers 503; the same Idempotency-Key once it is back runs it',
  async (t) => {
    await workerDb.cut();
    const send = () =>
      stack.request('POST', '/Companies', {
        body: { Name: 'After the outage' },
        headers: { 'idempotency-key': 'outage-1' },
      });
    const failed = await send();
    t.is(failed.status, 503, failed.text);
    t.is(failed.headers.get('retry-after'), '5');
    t.regex((failed.body as { detail: string }).detail, /nothing was changed.*same Idempotency-Key/);
    // The job's reason, shown by /Jobs and Bull Board, carries no SQL.
    const jobs = (await stack.get('/Jobs?queue=commands&state=failed')).body as { FailedReason: string }[];
    t.true(jobs.length > 0);
    for (const job of jobs) t.notRegex(job.FailedReason, /insert|select|companies|\$1/i, job.FailedReason);
    t.is(await count('companies', { name: 'After the outage' }), 0);
    // /Commands says the same: failed, not applied, a 503 problem (never a 500).
    const state = await stack.get(`/Commands/${idempotentCommandId('mock-user', 'outage-1')}`);
    t.like(state.body as object, { State: 'Failed', Problem: { status: 503, title: 'Service Unavailable' } });

    await workerDb.open();
    const again = await send();
    t.is(again.status, 201, again.text);
    t.is(await count('companies', { name: 'After the outage' }), 1);
    // And it is that key's answer from now on: a third send changes nothing.
    t.is((await send()).status, 201);
    t.is(await count('companies', { name: 'After the outage' }), 1);
  },
);

test.serial('MAX_PENDING_COMMANDS_PER_SUBJECT: commands beyond it are 429 before they are queued', async (t) => {
  const limited = await startStack({
    workers: [],
    env: { MAX_PENDING_COMMANDS_PER_SUBJECT: '3', COMMAND_TIMEOUT_MS: '200' },
  });
  t.teardown(() => limited.close());
  // No worker runs: each write stays queued (202) and counts.
  for (let i = 0; i < 3; i++)
    t.is((await limited.request('POST', '/Companies', { body: { Name: `Q${i}` } })).status, 202);
  const over = await limited.request('POST', '/Companies', { body: { Name: 'Q3' } });
  t.is(over.status, 429, over.text);
  t.is(over.headers.get('retry-after'), '1');
  t.regex((over.body as { detail: string }).detail, /MAX_PENDING_COMMANDS_PER_SUBJECT/);
  const queue = testQueue(limited.config, QUEUE.commands);
  t.teardown(() => queue.close());
  t.is(await queue.count(), 3, 'the refused command was never queued');
  // A worker takes them: the subject may send again.
  const worker = await startCommandWorker(limited.config);
  t.teardown(() => worker.close());
  await eventually(async () => (await limited.request('POST', '/Companies', { body: { Name: 'Q4' } })).status === 201);
});

test('an expanded read can be written back: owned collections are never cut, and its ETag satisfies If-Match', async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Many partners' });
  const schemeId = (await stack.knex('schemes').where({ scheme_name: 'Many partners' }).first('id')) as { id: number };
  const companies = (await stack
    .knex('companies')
    .insert(Array.from({ length: 120 }, (_, i) => ({ name: `Partner ${i}` })))
    .returning('id')) as { id: number }[];
  await stack
    .knex('scheme_companies')
    .insert(companies.map((c, i) => ({ scheme_id: schemeId.id, company_id: c.id, role: 'Investor', position: i })));
  const expanded = await stack.get(`/Schemes/${id}?$expand=Companies,Address`);
  t.is(expanded.status, 200);
  const doc = expanded.body as { Companies: unknown[] };
  t.is(doc.Companies.length, 120, 'more than MAX_EXPAND_TOP, all of them');
  const etag = expanded.headers.get('etag')!;
  t.regex(etag, /^"\d+-[0-9a-f]{32}"$/);
  const put = await stack.request('PUT', `/Schemes/${id}`, { body: doc, headers: { 'if-match': etag } });
  t.is(put.status, 204, put.text);
  t.is(await count('scheme_companies', { scheme_id: schemeId.id }), 120);
  // Once the row changes, the old ETag no longer matches.
  t.is((await patch(stack, `/Schemes/${id}`, [{ op: 'replace', path: '/SchemeName', value: 'Renamed' }])).status, 204);
  const stale = await stack.request('PUT', `/Schemes/${id}`, { body: doc, headers: { 'if-match': etag } });
  t.is(stale.status, 412);
});
