import test from 'ava';
import fc from 'fast-check';
import { readRowsOf } from '../../domain/batch/batch-read-rows';
import { entityByName } from '../../domain/entities';
import { parseReadOptions } from '../../domain/queries/read-options';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';

/** BATCH_MAX_READ_ROWS's estimate (DESIGN §13): an upper bound on the rows a GET may read, from its options. */

const Scheme = entityByName('Scheme');
const rows = (query: Record<string, string>, shape: 'page' | 'keyed' | 'count' = 'page') =>
  readRowsOf(Scheme, parseReadOptions(query, DEFAULT_READ_LIMITS), shape);

test('a page is its $top plus the rows $skip reads past; a keyed read or /$count is one row', (t) => {
  t.is(rows({}), 60);
  t.is(rows({ $top: '10', $skip: '5' }), 15);
  t.is(rows({}, 'keyed'), 1);
  t.is(rows({ $top: '1000' }, 'count'), 1);
});

test('a single related entity adds one row per row, a collection its $top or MAX_EXPAND_TOP, nested ones multiply', (t) => {
  t.is(rows({ $top: '10', $expand: 'Address' }), 10 * 2);
  t.is(rows({ $top: '10', $expand: 'Address($expand=Country)' }), 10 * 3);
  t.is(rows({ $top: '10', $expand: 'Companies' }), 10 * 101);
  t.is(rows({ $top: '10', $expand: 'Companies($top=5)' }), 10 * 6);
  t.is(rows({ $top: '10', $expand: 'Companies($top=5;$expand=Company)' }), 10 * (1 + 5 + 5));
});

test('the read of issue 24 may read 308,000 rows', (t) => {
  const expand =
    'Companies($expand=Company),Address($expand=Country),Developments,Market,BuildingType,DevelopmentType,DevelopmentStatus,Country';
  t.is(rows({ $top: '1000', $expand: expand }), 1000 * (1 + 200 + 2 + 100 + 5));
});

test('fast-check: the estimate never falls below the page, and grows with $top', (t) => {
  const expansion = fc.constantFrom('Companies', 'Address', 'Developments', 'Market', 'Companies($expand=Company)');
  fc.assert(
    fc.property(fc.nat(999), fc.uniqueArray(expansion, { maxLength: 3 }), (top, expand) => {
      const query: Record<string, string> = { $top: String(top) };
      if (expand.length) query.$expand = expand.join(',');
      const estimate = rows(query);
      t.true(estimate >= top);
      t.true(rows({ ...query, $top: String(top + 1) }) >= estimate);
    }),
  );
});
