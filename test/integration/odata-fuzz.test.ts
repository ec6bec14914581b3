import test from 'ava';
import fc from 'fast-check';
import type { Stack } from '../support/stack';
import { enc, type ReadFixture } from '../support/fixtures';
import { onReadSuite } from '../support/read-suite';

/**
 * A property over `/odata` URLs and headers (DESIGN §17): generated and mangled paths (sets, key
 * predicates, key segments, navigation, `$count`), query options (`$select` at every level,
 * `$expand`, `$filter`, `$top`, `$format`, …) and OData headers never cause a 5xx, and every 4xx
 * is an OData error. Each answer also passes the contract check against `$metadata`
 * (test/support/odata-contract.ts), which throws on a body the metadata does not allow.
 */

let stack: Stack;
let fx: ReadFixture;
onReadSuite(test, (suite) => ({ stack, fx } = suite));

const word = fc.oneof(
  fc.constantFrom('SchemeName', 'TotalUnits', 'Id', 'Notes', 'Address', 'Companies', 'Developments', '*', 'Nope'),
  fc.constantFrom('Name', 'City', 'Role', 'Company', 'Country', 'MarketBoundaries', 'Tags', 'constructor', ''),
  fc.string({ maxLength: 6 }),
);
const select = fc.array(word, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(','));
const nested = fc
  .tuple(
    fc.constantFrom('Address', 'Companies', 'Developments', 'Market', 'Notes', 'Nope', 'MarketBoundaries'),
    fc.option(select),
    fc.option(fc.constantFrom('Company', 'Country', 'Scheme', 'Market')),
  )
  .map(([nav, sel, inner]) => {
    const parts = [sel === null ? '' : `$select=${sel}`, inner === null ? '' : `$expand=${inner}`].filter(Boolean);
    return parts.length ? `${nav}(${parts.join(';')})` : nav;
  });
const wild = fc.record(
  {
    $select: select,
    $expand: fc.array(nested, { minLength: 1, maxLength: 3 }).map((xs) => xs.join(',')),
    $filter: fc.constantFrom(
      "SchemeName eq 'Alpha Tower'",
      'TotalUnits ne 40',
      'Name eq null',
      'TotalUnits gt',
      "Id gt 'x'",
    ),
    $orderby: fc.constantFrom('SchemeName desc', 'Name', 'Nope', 'TotalUnits,Id desc'),
    $top: fc.constantFrom('0', '1', '2', '1000', '1001', '-1', 'x'),
    $skip: fc.constantFrom('0', '1', '100001'),
    $count: fc.constantFrom('true', 'false', 'maybe'),
    $format: fc.constantFrom(
      'json',
      'application/json;odata.metadata=full',
      'application/json;odata.metadata=x',
      'xml',
      'atom',
    ),
    $search: fc.constantFrom('Alpha', 'a*', '"x'),
  },
  { requiredKeys: [] },
);
/** Options every set takes: most of these reads succeed, so what they answer is checked too. */
const valid = fc.record(
  {
    $select: fc.constantFrom('Id', '*', 'Id,Id'),
    $top: fc.constantFrom('0', '1', '2', '1000'),
    $skip: fc.constantFrom('0', '1'),
    $count: fc.constantFrom('true', 'false'),
    $format: fc.constantFrom('json', 'application/json;odata.metadata=full', 'application/json;odata.metadata=none'),
    $orderby: fc.constantFrom('Id desc', 'CreatedAt'),
  },
  { requiredKeys: [] },
);
const query = fc.oneof(fc.constant({}), valid, wild);

const key = () =>
  fc.oneof(
    fc.constantFrom(enc('Scheme', fx.schemes[0]!), enc('Scheme', fx.schemes[2]!), String(fx.schemes[1]), 'AAAAAAAA'),
    fc.constantFrom("O'Brien", '', '$count', '%00', '(', "')", '0', '99999999999999999999'),
    fc.string({ maxLength: 8 }),
  );
const keyed = (k: string) =>
  fc.constantFrom(`('${k.replace(/'/g, "''")}')`, `(Id='${k}')`, `/${k}`, `(${k})`, `('${k}'`);
/** Built once the fixture's keys are known. */
const paths = () =>
  fc.oneof(
    fc.constantFrom('', '/', '/$metadata', '/$batch', '/Nope', '/Schemes/$count', '/Activities', '/Companies'),
    fc.tuple(fc.constantFrom('Schemes', 'Companies', 'Addresses', 'Developments', 'Markets'), key()).chain(([set, k]) =>
      fc
        .tuple(
          keyed(k),
          fc.constantFrom('', '/Address', '/Developments', '/Companies', '/Notes', '/Country', '/$count', '/Nope/x'),
          fc.constantFrom('/Tags', '/MarketBoundaries', '/Notes/$count', '/Developments/$count', '/Address/$count'),
          // A member of a collection by key (`Developments('d')`), of a relation or a property (404s).
          fc
            .tuple(
              fc.constantFrom('/Developments', '/Companies', '/Address', '/Notes'),
              fc.oneof(key(), fc.constantFrom(...fx.developments.map((id) => enc('Development', id)))),
            )
            .chain(([nav, m]) => keyed(m).map((memberKey) => `${nav}${memberKey}`)),
          fc.nat({ max: 2 }),
        )
        .map(([predicate, rest, more, member, pick]) => `/${set}${predicate}${[rest, more, member][pick]}`),
    ),
    fc.constantFrom('/Schemes', '/Developments', '/Addresses'),
  );
const someHeaders = fc.record(
  {
    accept: fc.constantFrom(
      'application/json',
      'application/json;odata.metadata=none',
      'application/json;odata.metadata=full',
      'application/xml',
      '*/*',
      'text/html',
    ),
    prefer: fc.constantFrom('odata.maxpagesize=1', 'odata.maxpagesize=0', 'odata.maxpagesize=abc', 'return=minimal'),
    'odata-maxversion': fc.constantFrom('4.0', '4.01', '3.0', 'x'),
  },
  { requiredKeys: [] },
);

const encode = (text: string) =>
  Array.from(text)
    .map((ch) => (/[A-Za-z0-9\-._~'()*,$=:/@!]/.test(ch) ? ch : encodeURIComponent(ch)))
    .join('');
const wellFormed = (text: string) => !/[\uD800-\uDFFF]/.test(text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));

test.serial('generated /odata reads never answer a 5xx, and every 4xx is an OData error', async (t) => {
  const stats = { ok: 0, clientErrors: 0 };
  await fc.assert(
    fc.asyncProperty(
      paths(),
      query,
      fc.oneof(fc.constant({}), someHeaders),
      fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
      async (p, q, h, method) => {
        const pairs = Object.entries(q).filter(([, v]) => wellFormed(v));
        const qs = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
        const target = `/odata${p.split('/').map(encode).join('/')}${qs ? `?${qs}` : ''}`;
        // The contract check inside `request` throws on an answer the metadata does not allow.
        const res = await stack.request(method, target, { headers: h });
        if (res.status >= 500) throw new Error(`${method} ${target} → ${res.status} ${res.text}`);
        if (res.status >= 400) {
          stats.clientErrors++;
          if (method === 'GET') t.truthy((res.body as { error?: unknown }).error, `${target}: ${res.text}`);
        } else stats.ok++;
        return true;
      },
    ),
    { seed: 20261127, numRuns: 600, verbose: true },
  );
  t.log(`${stats.ok} answered, ${stats.clientErrors} client errors`);
  t.true(stats.ok > 50 && stats.clientErrors > 50, 'both valid and invalid reads are generated');
});
