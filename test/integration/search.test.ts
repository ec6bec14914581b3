import test from 'ava';
import { startStack, type Stack } from '../support/stack';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';
import { TestQueues, makeEvent } from '../support/queues';
import { QUEUE, REBUILD_VIEWS_JOB } from '../../domain/queues/queue-contracts';
import { Scheme } from '../../domain/entities';
import { parseReadOptions } from '../../domain/queries/read-options';
import { planRead } from '../../db/query/read-plan';
import { fetchPage, listStatements } from '../../db/query/entity-reader';
import { SEARCH_RANK_WINDOW, searchCondition } from '../../db/query/search-condition';

let stack: Stack;
let fx: ReadFixture;
let queues: TestQueues;
test.before(async () => {
  stack = await startStack();
  fx = await insertReadFixture(stack.knex);
  queues = new TestQueues(stack.config);
  // Rows were inserted behind the pipeline's back: build the read model with the rebuild job.
  await queues.run(QUEUE.views, REBUILD_VIEWS_JOB, {}, {}, 20_000);
});
test.after.always(async () => {
  await queues?.close();
  await stack?.close();
});

type Doc = Record<string, unknown>;

async function search(route: string, query: string, extra = ''): Promise<string[]> {
  const res = await stack.get(`/${route}?$search=${encodeURIComponent(query)}${extra}`);
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text}`);
  return (res.body as Doc[]).map((d) => (d.SchemeName ?? d.Name ?? d.AddressLine) as string);
}

test.serial('terms are ANDed and match word prefixes across the searchable fields', async (t) => {
  t.deepEqual(await search('Schemes', 'tower'), ['Alpha Tower']);
  t.deepEqual(await search('Schemes', 'tow'), ['Alpha Tower']);
  t.deepEqual(await search('Schemes', 'london'), ['Alpha Tower', "x'; DROP TABLE schemes;--"]);
  t.deepEqual(await search('Schemes', 'london alpha'), ['Alpha Tower']);
  t.deepEqual(await search('Schemes', 'EC1A'), ['Alpha Tower'], 'postcode of the address');
  t.deepEqual(await search('Schemes', 'gamma partners'), ['Alpha Tower'], 'linked company name');
  t.deepEqual(await search('Schemes', 'flagship'), ['Alpha Tower'], 'tag');
  t.deepEqual(await search('Schemes', 'second'), ['Alpha Tower'], 'note');
});

test.serial('phrases, OR, exclusion and field terms', async (t) => {
  t.deepEqual(await search('Schemes', '"alpha tower"'), ['Alpha Tower']);
  t.deepEqual(await search('Schemes', '"tower alpha"'), []);
  const either = await search('Schemes', 'yard OR works');
  t.deepEqual([...either].sort(), ['Beta Yard', 'Gamma Works']);
  t.deepEqual(await search('Schemes', 'london -alpha'), ["x'; DROP TABLE schemes;--"]);
  t.deepEqual(await search('Schemes', 'SchemeName:beta'), ['Beta Yard']);
  // "Beta 100% Capital_" is a company of Alpha Tower and Beta Yard: Company:beta finds both.
  t.deepEqual([...(await search('Schemes', 'Company:beta'))].sort(), ['Alpha Tower', 'Beta Yard']);
  t.deepEqual(await search('Schemes', 'City:dublin'), ['Beta Yard']);
});

test.serial('searchFields picks the fields of unrestricted terms', async (t) => {
  t.deepEqual([...(await search('Schemes', 'beta'))].sort(), ['Alpha Tower', 'Beta Yard']);
  t.deepEqual(await search('Schemes', 'beta', '&searchFields=SchemeName'), ['Beta Yard']);
  t.deepEqual([...(await search('Schemes', 'beta', '&searchFields=Company,Tag'))].sort(), ['Alpha Tower', 'Beta Yard']);
});

test.serial('relevance orders results when no $orderby is given; $orderby overrides it', async (t) => {
  // "beta" hits Beta Yard in its name and its company; Alpha Tower only through a company.
  t.deepEqual(await search('Schemes', 'beta'), ['Beta Yard', 'Alpha Tower']);
  t.deepEqual(await search('Schemes', 'beta', '&$orderby=SchemeName'), ['Alpha Tower', 'Beta Yard']);
});

test.serial('relevance ranks a window of the first matches in key order; later matches follow by key', async (t) => {
  // The window as the service sizes it (SEARCH_RANK_WINDOW) holds both matches; a window of one
  // holds only Alpha Tower (the lower key), so it comes first and Beta Yard follows by key.
  const names = async (window: number, top = 60, skip = 0) => {
    const options = parseReadOptions({ $search: 'beta', $top: String(top), $skip: String(skip) });
    const plan = planRead(Scheme, options);
    plan.search = searchCondition(Scheme, options.search!, undefined, window);
    const page = await fetchPage(stack.knex, listStatements(plan).page);
    return (JSON.parse(page.json) as Doc[]).map((d) => d.SchemeName);
  };
  t.deepEqual(await names(SEARCH_RANK_WINDOW), ['Beta Yard', 'Alpha Tower']);
  t.deepEqual(await names(2), ['Beta Yard', 'Alpha Tower']);
  t.deepEqual(await names(1), ['Alpha Tower', 'Beta Yard']);
  t.deepEqual(await names(1, 1, 1), ['Beta Yard'], 'the rows after the window are paged too');
  t.deepEqual(await names(1, 1, 2), []);
  // `london` matches two schemes: a window of one leaves one to follow it, in key order.
  const london = async (window: number) => {
    const options = parseReadOptions({ $search: 'london' });
    const plan = planRead(Scheme, options);
    plan.search = searchCondition(Scheme, options.search!, undefined, window);
    return (JSON.parse((await fetchPage(stack.knex, listStatements(plan).page)).json) as Doc[]).length;
  };
  t.is(await london(1), 2, 'every match is listed, whatever the window');
});

test.serial('search combines with $filter, $top, $skip, $count and $expand', async (t) => {
  const res = await stack.get(`/Schemes?$search=london&$filter=TotalUnits gt 10&$count=true&$expand=Address&$top=1`);
  t.is(res.headers.get('x-total-count'), '1');
  t.like((res.body as Doc[])[0]!, { SchemeName: 'Alpha Tower', Address: { City: 'London' } });
  const page2 = await stack.get(`/Schemes?$search=london&$orderby=SchemeName&$skip=1&$count=true`);
  t.is(page2.headers.get('x-total-count'), '2');
  t.deepEqual(
    (page2.body as Doc[]).map((d) => d.SchemeName),
    ["x'; DROP TABLE schemes;--"],
  );
  const count = await stack.get(`/Schemes/$count?$search=london`);
  t.is(count.text, '2');
});

test.serial('other searchable routes: Companies, Addresses, Countries', async (t) => {
  t.deepEqual(await search('Companies', 'acme'), ['Acme Holdings']);
  t.deepEqual(await search('Companies', 'RegistrationNumber:GP9'), ['Gamma Partners']);
  t.deepEqual(await search('Addresses', 'quay'), ['2 Quay Road']);
  t.deepEqual(await search('Countries', 'kingdom'), ['United Kingdom']);
});

test.serial('bad searches are 400 problems', async (t) => {
  for (const [path, pattern] of [
    [`/Schemes?$search=Nope:x`, /unknown search field 'Nope'/],
    [`/Schemes?$search=x&searchFields=Nope`, /unknown search field 'Nope'/],
    [`/Schemes?$search="open`, /unterminated/],
    [`/InvestmentEvents?$search=x`, /not offered/],
    [`/Schemes?$search=%26%26`, /no letters or digits/],
  ] as const) {
    const res = await stack.get(path);
    t.is(res.status, 400, path);
    t.regex((res.body as Doc).detail as string, pattern, path);
  }
});

test.serial('a company rename event re-indexes the schemes that show it (fan-out), old name gone', async (t) => {
  const gamma = fx.companies[2]!;
  await stack.knex('companies').where({ id: gamma }).update({ name: 'Zeta Capital' });
  await queues.publish(makeEvent('Company', 'Updated', gamma, { changedFields: ['Name'] }));
  t.deepEqual(await search('Schemes', 'zeta'), ['Alpha Tower']);
  t.deepEqual(await search('Schemes', 'Company:gamma'), []);
  t.deepEqual(await search('Companies', 'zeta'), ['Zeta Capital']);
});

test.serial('a removed company link is traced to its scheme through the event references', async (t) => {
  const [link] = (await stack
    .knex('scheme_companies')
    .where({ scheme_id: fx.schemes[1], company_id: fx.companies[1] })
    .select('id')) as { id: number }[];
  await stack.knex('scheme_companies').where({ id: link!.id }).delete();
  await queues.publish(
    makeEvent('SchemeCompany', 'Deleted', link!.id, {
      references: { Scheme: fx.schemes[1]!, Company: fx.companies[1]! },
    }),
  );
  t.deepEqual(await search('Schemes', 'Company:beta'), ['Alpha Tower']);
});

test.serial('the same event delivered twice leaves one activity; /Activities reads with OData', async (t) => {
  const event = makeEvent('Scheme', 'Updated', fx.schemes[0]!, { changedFields: ['SchemeName'], subject: 'alice' });
  await queues.publish(event);
  // A second delivery: a new job (the first is gone from the queue) carrying the same event id.
  await queues.deliverSingle(QUEUE.notifications, event, { jobId: `${event.eventId}-redelivery` });
  const rows = await stack.knex('activities').where({ event_id: event.eventId });
  t.is(rows.length, 1);
  const res = await stack.get(
    `/Activities?$filter=${encodeURIComponent(`Subject eq 'alice' and EntityId eq '${enc('Scheme', fx.schemes[0]!)}'`)}&$orderby=OccurredAt desc`,
  );
  t.is(res.status, 200);
  t.like((res.body as Doc[])[0]!, {
    EventType: 'SchemeUpdated',
    EntityType: 'Scheme',
    EntityId: enc('Scheme', fx.schemes[0]!),
    Subject: 'alice',
    ChangedFields: ['SchemeName'],
  });
  const bad = await stack.get(`/Activities?$filter=${encodeURIComponent(`ChangedFields eq 'x'`)}`);
  t.is(bad.status, 400);
});
