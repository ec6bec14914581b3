import test from 'ava';
import buildQuery from 'odata-query';
import { parseOrderBy } from '../../domain/odata';
import { rejectsMacro } from '../support/odata-parsing';
import { fuzzParser } from '../support/odata-parsing';

const rejects = rejectsMacro('$orderby', parseOrderBy);

test('a single key defaults to asc', (t) => {
  t.deepEqual(parseOrderBy('Name'), [{ path: ['Name'], direction: 'asc', span: { start: 0, end: 4 } }]);
});

test('explicit directions', (t) => {
  t.deepEqual(parseOrderBy('Name asc'), [{ path: ['Name'], direction: 'asc', span: { start: 0, end: 8 } }]);
  t.deepEqual(parseOrderBy('Name desc'), [{ path: ['Name'], direction: 'desc', span: { start: 0, end: 9 } }]);
});

test('several keys with navigation paths', (t) => {
  t.deepEqual(parseOrderBy('Address/City desc, SchemeName,BuildingType/Name asc'), [
    { path: ['Address', 'City'], direction: 'desc', span: { start: 0, end: 17 } },
    { path: ['SchemeName'], direction: 'asc', span: { start: 19, end: 29 } },
    { path: ['BuildingType', 'Name'], direction: 'asc', span: { start: 30, end: 51 } },
  ]);
});

test('tabs and extra spaces', (t) => {
  t.deepEqual(
    parseOrderBy('\tA  desc ,\tB ').map(({ path, direction }) => ({ path, direction })),
    [
      { path: ['A'], direction: 'desc' },
      { path: ['B'], direction: 'asc' },
    ],
  );
});

test('odata-query orderby output parses', (t) => {
  const orderbyOf = (options: Parameters<typeof buildQuery>[0]) =>
    decodeURIComponent(buildQuery(options).replace(/^\?\$orderby=/, ''));
  t.deepEqual(
    parseOrderBy(orderbyOf({ orderBy: [['A', 'desc'], 'B/C'] })).map(({ path, direction }) => ({ path, direction })),
    [
      { path: ['A'], direction: 'desc' },
      { path: ['B', 'C'], direction: 'asc' },
    ],
  );
  t.deepEqual(
    parseOrderBy(orderbyOf({ orderBy: { Address: 'City desc' } })).map(({ path, direction }) => ({ path, direction })),
    [{ path: ['Address', 'City'], direction: 'desc' }],
  );
});

test(rejects, '', 0, '', '$orderby: expected a property path at position 0 but found end of input');
test(rejects, 'A,', 2, '', '$orderby: expected a property path at position 2 but found end of input');
test(rejects, 'A DESC', 2, 'DESC', "$orderby: unexpected 'DESC' at position 2");
test(rejects, 'A desc desc', 7, 'desc');
test(rejects, 'A desc B', 7, 'B');
test(rejects, 'tolower(Name)', 7, '(');
test(rejects, 'A//B', 2, '/', "$orderby: expected a property name at position 2 but found '/'");
test(rejects, 'A /B', 2, '/');
test(rejects, "'A'", 0, "'A'");
test(rejects, 'A,,B', 2, ',');
test(rejects, 'Name asc;', 8, ';');

test('random strings produce an AST or an ODataSyntaxError', (t) => {
  fuzzParser(parseOrderBy, ['A', 'B', '/', ',', ' ', 'asc', 'desc', '(', "'", '1']);
  t.pass();
});
