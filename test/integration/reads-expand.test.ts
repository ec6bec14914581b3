import test from 'ava';
import { startStack, type Stack } from '../support/stack';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';

let stack: Stack;
let fx: ReadFixture;
test.before(async () => {
  stack = await startStack({ workers: [] });
  fx = await insertReadFixture(stack.knex);
  // Three more schemes with three company links each, for the paging rule.
  for (let i = 0; i < 3; i++) {
    const [row] = (await stack
      .knex('schemes')
      .insert({ scheme_name: `Paged ${i}` })
      .returning('id')) as { id: number }[];
    await stack.knex('scheme_companies').insert(
      fx.companies.map((company_id, position) => ({
        scheme_id: row!.id,
        company_id,
        position,
        percentage_share: 0.1 * (position + 1),
      })),
    );
  }
});
test.after.always(async () => {
  await stack?.close();
});

type Doc = Record<string, unknown>;

test('$top counts root rows: every row of a page carries all its expanded children', async (t) => {
  const res = await stack.get(`/Schemes?$filter=startswith(SchemeName,'Paged')&$expand=Companies&$top=2`);
  const docs = res.body as Doc[];
  t.deepEqual(
    docs.map((d) => d.SchemeName),
    ['Paged 0', 'Paged 1'],
  );
  for (const doc of docs) t.is((doc.Companies as Doc[]).length, 3);
  const next = await stack.get(`/Schemes?$filter=startswith(SchemeName,'Paged')&$expand=Companies&$top=2&$skip=2`);
  t.deepEqual(
    (next.body as Doc[]).map((d) => [d.SchemeName, (d.Companies as Doc[]).length]),
    [['Paged 2', 3]],
  );
});

test('nested $expand: Address($expand=Country) and Companies($expand=Company)', async (t) => {
  const res = await stack.get(`/Schemes?$expand=Address($expand=Country),Companies($expand=Company)&$top=2`);
  t.is(res.status, 200);
  const [alpha, beta] = res.body as Doc[];
  t.like(alpha!.Address as Doc, { City: 'London', Country: { IsoCode: 'GB', Name: 'United Kingdom' } });
  t.like(beta!.Address as Doc, { City: 'Dublin', Country: { IsoCode: 'IE' } });
  t.like((alpha!.Companies as Doc[])[0]!, {
    Role: 'Developer',
    Company: { Name: 'Acme Holdings', Country: { Id: enc('Country', fx.countries.GB!) } },
  });
});

test('nested $filter, $orderby and $top inside an expanded collection', async (t) => {
  const res = await stack.get(
    `/Schemes/${fx.schemes[0]}?$expand=${encodeURIComponent(`Companies($expand=Company;$filter=PercentageShare ge 0.3;$orderby=PercentageShare asc;$top=5)`)}`,
  );
  t.is(res.status, 200);
  t.deepEqual(
    ((res.body as Doc).Companies as Doc[]).map((c) => [c.PercentageShare, (c.Company as Doc).Name]),
    [
      [0.3, 'Beta 100% Capital_'],
      [0.5, 'Acme Holdings'],
    ],
  );
  const topped = await stack.get(
    `/Schemes/${fx.schemes[0]}?$expand=${encodeURIComponent('Companies($orderby=Role desc;$top=1)')}`,
  );
  t.deepEqual(
    ((topped.body as Doc).Companies as Doc[]).map((c) => c.Role),
    ['Lender'],
  );
});

test('owned collections keep written order when expanded', async (t) => {
  const res = await stack.get(`/Schemes/${fx.schemes[0]}?$expand=Companies`);
  t.deepEqual(
    ((res.body as Doc).Companies as Doc[]).map((c) => c.Role),
    ['Developer', 'Investor', 'Lender'],
  );
});

test('expansions on other families: InvestmentEvent.Companies, Portfolio.InvestmentEvents, Market.Country', async (t) => {
  const ie = await stack.get(`/InvestmentEvents?$expand=Companies($expand=Company),Scheme,Portfolio`);
  const first = (ie.body as Doc[])[0]!;
  t.like(first, { Currency: 'GBP', Scheme: { SchemeName: 'Alpha Tower' }, Portfolio: { Name: 'Core Fund' } });
  t.like((first.Companies as Doc[])[0]!, { Role: 'Buyer', Company: { Name: 'Acme Holdings' } });
  const portfolio = await stack.get(`/Portfolios/${fx.portfolio}?$expand=InvestmentEvents($orderby=EventDate desc)`);
  t.deepEqual(
    ((portfolio.body as Doc).InvestmentEvents as Doc[]).map((e) => e.EventDate),
    ['2024-01-10', '2023-06-01'],
  );
  const markets = await stack.get(`/Markets?$expand=Country&$top=1`);
  t.like((markets.body as Doc[])[0]!, { Country: { IsoCode: 'GB' } });
});

test('bad $expand is a 400 problem with a position', async (t) => {
  for (const [expand, pattern] of [
    ['Nope', /unknown relation 'Nope' of Scheme at position 0/],
    ['Address($filter=City eq 1)', /single related entity/],
    ['Companies($filter=Nope eq 1)', /unknown property 'Nope' of SchemeCompany/],
    ['Companies($top=x)', /\$expand/],
  ] as const) {
    const res = await stack.get(`/Schemes?$expand=${encodeURIComponent(expand)}`);
    t.is(res.status, 400, expand);
    t.regex((res.body as Doc).detail as string, pattern, expand);
  }
});

test('a page with expansions is one statement whatever its size (no N+1)', async (t) => {
  const statements: string[] = [];
  // A knex of its own: the API shares stack.knex with the other tests of this file, which run
  // concurrently, so a listener there would count their statements too.
  const { createKnex } = await import('../../db/knex');
  const { listEntities } = await import('../../db/query/entity-reader');
  const { parseReadOptions } = await import('../../domain/queries/read-options');
  const { Scheme } = await import('../../domain/entities');
  const knex = createKnex(stack.config.databaseUrl, 1);
  knex.on('query', (q: { sql: string }) => statements.push(q.sql));
  try {
    for (const top of ['1', '7']) {
      statements.length = 0;
      const page = await listEntities(
        knex,
        Scheme,
        parseReadOptions(
          { $top: top, $expand: 'Address($expand=Country),Companies($expand=Company),Developments' },
          1000,
        ),
      );
      t.is(statements.length, 1, `$top=${top}`);
      const docs = JSON.parse(page.json) as Doc[];
      t.true(docs.length >= 1 && docs.length <= Number(top), `$top=${top}`);
      t.true(
        docs.every((d) => Array.isArray(d.Companies) && Array.isArray(d.Developments)),
        'expanded',
      );
    }
  } finally {
    await knex.destroy();
  }
});
