import test from 'ava';
import fc from 'fast-check';
import buildQuery from 'odata-query';
import { ODataSyntaxError, parseOrderBy } from '../../domain/odata';

const rejects = test.macro({
  exec(t, text: string, position: number, offending: string, message?: string) {
    const error = t.throws(() => parseOrderBy(text), { instanceOf: ODataSyntaxError });
    t.is(error?.option, '$orderby');
    t.is(error?.position, position);
    t.is(error?.offending, offending);
    t.true(error?.message.includes(`at position ${position}`));
    if (message !== undefined) t.is(error?.message, message);
  },
  title: (_provided, text: string) => `rejects ${JSON.stringify(text)}`,
});

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

function onlySyntaxErrors(text: string): boolean {
  try {
    parseOrderBy(text);
    return true;
  } catch (error) {
    return error instanceof ODataSyntaxError;
  }
}

test('random strings produce an AST or an ODataSyntaxError', (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 60 }), onlySyntaxErrors), { numRuns: 3000 });
  const fragments = ['A', 'B', '/', ',', ' ', 'asc', 'desc', '(', "'", '1'];
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 30 }), (parts) =>
      onlySyntaxErrors(parts.join('')),
    ),
    { numRuns: 3000 },
  );
  t.pass();
});
