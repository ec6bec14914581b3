import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import type { Knex } from 'knex';
import { createKnex } from '../../db/knex';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startStack } from '../support/stack';

/**
 * The demo data set of a first `npm start` (DESIGN §15): scripts/start.sh runs db/cli/seed-demo.js
 * after the migration; here that same program runs against fresh test databases.
 */

const root = path.resolve(__dirname, '../../..');
const SEED_DEMO_SCRIPT = 'dist/db/cli/seed-demo.js';

async function seedDemo(url: string, env: Record<string, string> = {}): Promise<string> {
  const { stderr } = await promisify(execFile)(process.execPath, [SEED_DEMO_SCRIPT], {
    cwd: root,
    env: { PATH: process.env.PATH, DATABASE_URL: url, ...env },
  });
  return stderr;
}

/** A fresh migrated database with a knex on it, dropped when the test ends. */
async function freshDatabase(t: {
  teardown(fn: () => Promise<void>): void;
}): Promise<{ db: TestDatabase; knex: Knex }> {
  const db = await createTestDatabase();
  const knex = createKnex(db.url, 2);
  t.teardown(async () => {
    await knex.destroy();
    await db.drop();
  });
  return { db, knex };
}

const count = async (knex: Knex, table: string) =>
  Number((await knex(table).count<{ count: string }[]>('* as count'))[0]!.count);

/** Everything the demo data set holds that does not depend on the clock. */
async function contents(knex: Knex) {
  return {
    schemes: await knex('schemes')
      .select('id', 'scheme_name', 'address_id', 'total_units', 'completion_date', 'country_id')
      .orderBy('id'),
    addresses: await knex('addresses').select('id', 'address_line', 'city', 'postcode').orderBy('id'),
    companies: await knex('companies').select('id', 'name', 'registration_number').orderBy('id'),
    links: await knex('scheme_companies').select('id', 'scheme_id', 'company_id', 'role').orderBy('id'),
    notes: await knex('scheme_notes').select('id', 'scheme_id', 'text').orderBy('id'),
    tags: await knex('scheme_tags').select('id', 'scheme_id', 'name').orderBy('id'),
    searchDocuments: await count(knex, 'search_fields'),
  };
}

test('start.sh runs the demo seed after the migration', (t) => {
  const start = readFileSync(path.join(root, 'scripts/start.sh'), 'utf8');
  const migrate = start.indexOf('node dist/db/cli/migrate.js');
  t.true(migrate >= 0);
  t.true(start.indexOf(`node ${SEED_DEMO_SCRIPT}`) > migrate);
});

test('on a database without schemes it loads a few hundred schemes with their records, the same on every fresh database', async (t) => {
  const first = await freshDatabase(t);
  const second = await freshDatabase(t);
  const said = await seedDemo(first.db.url);
  t.regex(said, /no schemes: loading the demo data set .*SEED_DEMO=false skips this/);
  t.regex(said, /demo data loaded: \d+ rows and \d+ search documents/);
  await seedDemo(second.db.url);

  const a = await contents(first.knex);
  t.is(a.schemes.length, 300);
  for (const table of ['addresses', 'companies', 'links', 'notes', 'tags'] as const) t.true(a[table].length > 0, table);
  t.true(a.searchDocuments >= 300);
  t.deepEqual(await contents(second.knex), a, 'same keys, so the same encoded Ids, and the same contents');
});

test('a database that has schemes is left alone', async (t) => {
  const { db, knex } = await freshDatabase(t);
  const [address] = (await knex('addresses').insert({ address_line: '1 Quay Road', city: 'Cork' }, ['id'])) as {
    id: number;
  }[];
  await knex('schemes').insert({ scheme_name: 'Mine', address_id: address!.id });
  const said = await seedDemo(db.url);
  t.regex(said, /the database has 1 schemes: no demo data loaded/);
  t.is(await count(knex, 'schemes'), 1);
  t.is(await count(knex, 'addresses'), 1);
  t.is(await count(knex, 'companies'), 0);
});

test('SEED_DEMO=false skips it, and says so', async (t) => {
  const { db, knex } = await freshDatabase(t);
  t.regex(await seedDemo(db.url, { SEED_DEMO: 'false' }), /SEED_DEMO=false: no demo data/);
  t.is(await count(knex, 'schemes'), 0);
  t.is(await count(knex, 'addresses'), 0);
  await t.throwsAsync(seedDemo(db.url, { SEED_DEMO: 'no thanks' }), { message: /SEED_DEMO must be true or false/ });
  t.is(await count(knex, 'schemes'), 0);
});

/** The curl lines of the README block marked as demo examples: path, and what the comment promises. */
function readmeExamples(): { path: string; comment: string }[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const marker = readme.indexOf('<!-- demo examples:');
  const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(marker))?.[1] ?? '';
  return block
    .split('\n')
    .filter((line) => line.startsWith('curl '))
    .map((line) => {
      const match = /^curl -s (?:'([^']+)'|(\S+))[^#]*(?:#\s*(.*))?$/.exec(line);
      if (!match) throw new Error(`README example not understood: ${line}`);
      const url = (match[1] ?? match[2])!;
      return { path: url.replace(/^localhost:3000/, ''), comment: (match[3] ?? '').trim() };
    });
}

test("the README's first examples answer with data once the demo data is loaded", async (t) => {
  const stack = await startStack({ workers: [] });
  t.teardown(() => stack.close());
  await seedDemo(stack.directDatabaseUrl);
  const examples = readmeExamples();
  t.true(examples.length >= 5, 'the marked block was found');
  t.true(
    examples.some((example) => /^\/Schemes\/[A-Za-z0-9_-]{6}$/.test(example.path)),
    'one example reads a scheme by Id',
  );
  for (const { path: url, comment } of examples) {
    const res = await stack.get(url);
    t.is(res.status, 200, `${url}: ${res.text}`);
    const body = res.body as Record<string, unknown> | Record<string, unknown>[];
    if (Array.isArray(body)) t.true(body.length > 0, `${url} lists something`);
    else if (!url.startsWith('/health/')) t.truthy(body.Id, `${url} reads an entity`);
    const total = /X-Total-Count: (\d+)/.exec(comment);
    if (total) t.is(res.headers.get('x-total-count'), total[1]!, url);
    else if (comment)
      t.is((body as Record<string, unknown>).SchemeName ?? (body as Record<string, unknown>).Name, comment);
  }
});
