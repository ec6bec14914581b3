import test from 'ava';
import buildQuery from 'odata-query';
import { Expr, ODataSyntaxError, parseFilter } from '../../domain/odata';
import { stripSpans, queryOptions, rejectsMacro } from '../support/odata-parsing';
import { fuzzParser } from '../support/odata-parsing';

// ---- span-free builders: most shape assertions ignore spans; dedicated tests check spans exactly.

const shape = (text: string) => stripSpans(parseFilter(text));
const path = (...segments: string[]) => ({ kind: 'path', segments });
const lit = (type: string, value: unknown, raw: string) => ({ kind: 'literal', type, value, raw });
const str = (value: string) => lit('string', value, `'${value.replaceAll("'", "''")}'`);
const num = (value: number, raw = String(value)) => lit('number', value, raw);
const bin = (op: string, left: unknown, right: unknown) => ({ kind: 'binary', op, left, right });
const not = (operand: unknown) => ({ kind: 'not', operand });
const inList = (left: unknown, ...list: unknown[]) => ({ kind: 'in', left, list });
const call = (name: string, ...args: unknown[]) => ({ kind: 'call', name, args });
const lambda = (op: string, collection: string[], variable: string | null, body: unknown) => ({
  kind: 'lambda',
  op,
  collection,
  variable,
  body,
});

const rejects = rejectsMacro('$filter', parseFilter);

// ---- operators and precedence

for (const op of ['eq', 'ne', 'gt', 'ge', 'lt', 'le']) {
  test(`comparison ${op}`, (t) => {
    t.deepEqual(parseFilter(`Price ${op} 10`), {
      kind: 'binary',
      op,
      left: { kind: 'path', segments: ['Price'], span: { start: 0, end: 5 } },
      right: {
        kind: 'literal',
        type: 'number',
        value: 10,
        raw: '10',
        span: { start: 7 + op.length, end: 9 + op.length },
      },
      span: { start: 0, end: 9 + op.length },
    } as Expr);
  });
}

test('and binds tighter than or', (t) => {
  t.deepEqual(
    shape('A eq 1 or B eq 2 and C eq 3'),
    bin('or', bin('eq', path('A'), num(1)), bin('and', bin('eq', path('B'), num(2)), bin('eq', path('C'), num(3)))),
  );
  t.deepEqual(
    shape('A eq 1 and B eq 2 or C eq 3'),
    bin('or', bin('and', bin('eq', path('A'), num(1)), bin('eq', path('B'), num(2))), bin('eq', path('C'), num(3))),
  );
});

test('and / or are left-associative', (t) => {
  t.deepEqual(
    shape('A eq 1 and B eq 2 and C eq 3'),
    bin('and', bin('and', bin('eq', path('A'), num(1)), bin('eq', path('B'), num(2))), bin('eq', path('C'), num(3))),
  );
  t.deepEqual(shape('A or B or C'), bin('or', bin('or', path('A'), path('B')), path('C')));
});

test('parentheses override precedence', (t) => {
  t.deepEqual(
    shape('(A eq 1 or B eq 2) and C eq 3'),
    bin('and', bin('or', bin('eq', path('A'), num(1)), bin('eq', path('B'), num(2))), bin('eq', path('C'), num(3))),
  );
});

test('nested parentheses are transparent', (t) => {
  t.deepEqual(shape('(((A eq 1)))'), shape('A eq 1'));
  t.deepEqual(
    shape('((A eq 1) or ((B eq 2) and (C eq 3)))'),
    bin('or', bin('eq', path('A'), num(1)), bin('and', bin('eq', path('B'), num(2)), bin('eq', path('C'), num(3)))),
  );
});

test('not sits between and and comparison', (t) => {
  t.deepEqual(
    shape("not Name eq 'x' and B eq 2"),
    bin('and', not(bin('eq', path('Name'), str('x'))), bin('eq', path('B'), num(2))),
  );
  t.deepEqual(
    shape('not (A eq 1 or B eq 2)'),
    not(bin('or', bin('eq', path('A'), num(1)), bin('eq', path('B'), num(2)))),
  );
  t.deepEqual(shape('not(A)'), not(path('A')));
  t.deepEqual(shape('not not A'), not(not(path('A'))));
  t.deepEqual(shape('A or not B'), bin('or', path('A'), not(path('B'))));
});

test('in with a list', (t) => {
  t.deepEqual(shape("Name in ('a','b')"), inList(path('Name'), str('a'), str('b')));
  t.deepEqual(shape('Id in ( 1 , 2 ,3 )'), inList(path('Id'), num(1), num(2), num(3)));
  t.deepEqual(shape("Name in ('only')"), inList(path('Name'), str('only')));
  t.deepEqual(
    shape("Name in ('a') and not Status/Name in ('x','y')"),
    bin('and', inList(path('Name'), str('a')), not(inList(path('Status', 'Name'), str('x'), str('y')))),
  );
});

test('in has an exact span up to the closing parenthesis', (t) => {
  const expr = parseFilter("Name in ('a', 'b')");
  t.deepEqual(expr.span, { start: 0, end: 18 });
});

test('spans are exact offsets', (t) => {
  const text = "(A eq 1) and not contains(B/C,'x')";
  t.deepEqual(parseFilter(text), {
    kind: 'binary',
    op: 'and',
    left: {
      kind: 'binary',
      op: 'eq',
      left: { kind: 'path', segments: ['A'], span: { start: 1, end: 2 } },
      right: { kind: 'literal', type: 'number', value: 1, raw: '1', span: { start: 6, end: 7 } },
      // A parenthesized expression's span covers its parentheses.
      span: { start: 0, end: 8 },
    },
    right: {
      kind: 'not',
      operand: {
        kind: 'call',
        name: 'contains',
        args: [
          { kind: 'path', segments: ['B', 'C'], span: { start: 26, end: 29 } },
          { kind: 'literal', type: 'string', value: 'x', raw: "'x'", span: { start: 30, end: 33 } },
        ],
        span: { start: 17, end: 34 },
      },
      span: { start: 13, end: 34 },
    },
    span: { start: 0, end: 34 },
  } as Expr);
});

// ---- functions

for (const name of ['tolower', 'toupper', 'length', 'trim', 'year', 'month', 'day']) {
  test(`unary function ${name}`, (t) => {
    t.deepEqual(shape(`${name}(Name) eq 1`), bin('eq', call(name, path('Name')), num(1)));
  });
}

for (const name of ['contains', 'startswith', 'endswith']) {
  test(`boolean function ${name}`, (t) => {
    t.deepEqual(shape(`${name}(Address/City,'Lon')`), call(name, path('Address', 'City'), str('Lon')));
  });
}

test('functions nest and combine', (t) => {
  t.deepEqual(
    shape("contains(tolower(Name), 'acme') and length(trim(Name)) gt 3"),
    bin(
      'and',
      call('contains', call('tolower', path('Name')), str('acme')),
      bin('gt', call('length', call('trim', path('Name'))), num(3)),
    ),
  );
  t.deepEqual(shape('year(CreatedAt) ge 2024'), bin('ge', call('year', path('CreatedAt')), num(2024)));
});

// ---- lambdas

test('any with a variable', (t) => {
  t.deepEqual(parseFilter("Companies/any(c: c/Company/Id eq 'x')"), {
    kind: 'lambda',
    op: 'any',
    collection: ['Companies'],
    variable: 'c',
    body: {
      kind: 'binary',
      op: 'eq',
      left: { kind: 'path', segments: ['c', 'Company', 'Id'], span: { start: 17, end: 29 } },
      right: { kind: 'literal', type: 'string', value: 'x', raw: "'x'", span: { start: 33, end: 36 } },
      span: { start: 17, end: 36 },
    },
    span: { start: 0, end: 37 },
  } as Expr);
});

test('all with a variable and a compound body', (t) => {
  t.deepEqual(
    shape("Companies/all(sc:sc/PercentageShare gt 0.1 and sc/Role ne 'Lender')"),
    lambda(
      'all',
      ['Companies'],
      'sc',
      bin('and', bin('gt', path('sc', 'PercentageShare'), num(0.1)), bin('ne', path('sc', 'Role'), str('Lender'))),
    ),
  );
});

test('any() and all() without a variable', (t) => {
  t.deepEqual(shape('Companies/any()'), lambda('any', ['Companies'], null, null));
  t.deepEqual(shape('Tags/all()'), lambda('all', ['Tags'], null, null));
  t.deepEqual(shape('not Companies/any()'), not(lambda('any', ['Companies'], null, null)));
});

test('nested any and a lambda on a navigation path', (t) => {
  t.deepEqual(
    shape("Developments/any(d: d/Companies/any(c: c/Company/Name eq 'A' and d/Name eq c/Role))"),
    lambda(
      'any',
      ['Developments'],
      'd',
      lambda(
        'any',
        ['d', 'Companies'],
        'c',
        bin('and', bin('eq', path('c', 'Company', 'Name'), str('A')), bin('eq', path('d', 'Name'), path('c', 'Role'))),
      ),
    ),
  );
  t.deepEqual(
    shape("Scheme/Companies/any(x: x/Role eq 'a') or Id eq 'k'"),
    bin(
      'or',
      lambda('any', ['Scheme', 'Companies'], 'x', bin('eq', path('x', 'Role'), str('a'))),
      bin('eq', path('Id'), str('k')),
    ),
  );
});

test('a lambda body may refer to the outer entity', (t) => {
  t.deepEqual(
    shape('Companies/any(c: c/Role eq Name)'),
    lambda('any', ['Companies'], 'c', bin('eq', path('c', 'Role'), path('Name'))),
  );
});

test('a segment named any is a plain path segment unless called', (t) => {
  t.deepEqual(shape('A/any eq 1'), bin('eq', path('A', 'any'), num(1)));
});

// ---- literals

test('string escaping', (t) => {
  t.deepEqual(shape("Name eq 'O''Brien'"), bin('eq', path('Name'), lit('string', "O'Brien", "'O''Brien'")));
  t.deepEqual(shape("Name eq ''"), bin('eq', path('Name'), lit('string', '', "''")));
  t.deepEqual(shape("Name eq ''''"), bin('eq', path('Name'), lit('string', "'", "''''")));
  t.deepEqual(shape("Name eq 'a (b) ; c, d / e'"), bin('eq', path('Name'), str('a (b) ; c, d / e')));
});

test('injection-looking text is a single string literal', (t) => {
  const text = "Name eq 'x''; DROP TABLE schemes;--'";
  t.deepEqual(
    shape(text),
    bin('eq', path('Name'), lit('string', "x'; DROP TABLE schemes;--", "'x''; DROP TABLE schemes;--'")),
  );
  t.deepEqual(shape("Name eq '1'' or ''1''=''1'"), bin('eq', path('Name'), str("1' or '1'='1")));
});

test('booleans and null', (t) => {
  t.deepEqual(shape('Active eq true'), bin('eq', path('Active'), lit('boolean', true, 'true')));
  t.deepEqual(shape('Active ne false'), bin('ne', path('Active'), lit('boolean', false, 'false')));
  t.deepEqual(shape('Address eq null'), bin('eq', path('Address'), lit('null', null, 'null')));
  t.deepEqual(shape('null ne Address/City'), bin('ne', lit('null', null, 'null'), path('Address', 'City')));
});

test('numbers: negative, decimal, exponent', (t) => {
  t.deepEqual(shape('A eq -5'), bin('eq', path('A'), num(-5, '-5')));
  t.deepEqual(shape('A gt 0.25'), bin('gt', path('A'), num(0.25, '0.25')));
  t.deepEqual(shape('A lt -1.5'), bin('lt', path('A'), num(-1.5, '-1.5')));
  t.deepEqual(shape('A le 1e3'), bin('le', path('A'), num(1000, '1e3')));
  t.deepEqual(shape('A ge 2.5E-2'), bin('ge', path('A'), num(0.025, '2.5E-2')));
  t.deepEqual(shape('A eq 0'), bin('eq', path('A'), num(0)));
});

test('date literals', (t) => {
  t.deepEqual(shape('Start ge 2024-01-31'), bin('ge', path('Start'), lit('date', '2024-01-31', '2024-01-31')));
  t.deepEqual(shape('Start eq 2024-02-29'), bin('eq', path('Start'), lit('date', '2024-02-29', '2024-02-29')));
  t.deepEqual(
    shape('Start in (2024-01-01,2024-12-31)'),
    inList(path('Start'), lit('date', '2024-01-01', '2024-01-01'), lit('date', '2024-12-31', '2024-12-31')),
  );
});

for (const value of [
  '2024-01-31T10:00:00Z',
  '2024-01-31T10:00Z',
  '2024-01-31T10:00:00.123Z',
  '2024-01-31T23:59:59.1234567+01:00',
  '2024-01-31T00:00:00-05:30',
]) {
  test(`datetime literal ${value}`, (t) => {
    t.deepEqual(shape(`UpdatedAt lt ${value}`), bin('lt', path('UpdatedAt'), lit('datetime', value, value)));
  });
}

test('navigation paths', (t) => {
  t.deepEqual(shape("Address/AddressLine eq 'x'"), bin('eq', path('Address', 'AddressLine'), str('x')));
  t.deepEqual(shape("BuildingType/Id eq 'h1am3Q'"), bin('eq', path('BuildingType', 'Id'), str('h1am3Q')));
  t.deepEqual(shape("Id eq 'h1am3Q'"), bin('eq', path('Id'), str('h1am3Q')));
  t.deepEqual(shape('_a/B_2/c3 eq 1'), bin('eq', path('_a', 'B_2', 'c3'), num(1)));
});

test('tabs and extra spaces are whitespace; operands may touch string literals', (t) => {
  t.deepEqual(shape("\tName  eq\t'x'  "), bin('eq', path('Name'), str('x')));
  t.deepEqual(shape("Name eq'x'"), bin('eq', path('Name'), str('x')));
});

// ---- errors

test('errors are ODataSyntaxError instances with their fields', (t) => {
  const error = t.throws(() => parseFilter("Name eqq 'x'"), { instanceOf: ODataSyntaxError });
  t.true(error instanceof Error);
  t.is(error?.name, 'ODataSyntaxError');
  t.is(error?.message, "$filter: unexpected 'eqq' at position 5");
});

test(rejects, "Name eqq 'x'", 5, 'eqq', "$filter: unexpected 'eqq' at position 5");
test(rejects, "Name eq 'abc", 8, "'abc", '$filter: unterminated string literal at position 8');
test(rejects, "(Name eq 'x'", 12, '', "$filter: expected ')' at position 12 but found end of input");
test(rejects, 'A eq 1 and (B eq 2 or C eq 3', 28, '', "$filter: expected ')' at position 28 but found end of input");
test(rejects, 'Name eq', 7, '', '$filter: expected an expression at position 7 but found end of input');
test(rejects, '', 0, '', '$filter: expected an expression at position 0 but found end of input');
test(rejects, '   ', 3, '');
test(rejects, 'D eq 2024-13-01', 5, '2024-13-01', "$filter: invalid date '2024-13-01' at position 5");
test(rejects, 'D eq 2023-02-29', 5, '2023-02-29');
test(rejects, 'D eq 2024-04-31', 5, '2024-04-31');
test(rejects, 'D eq 2024-00-10', 5, '2024-00-10');
test(rejects, 'D eq 2024-1-5', 5, '2024-1-5');
test(
  rejects,
  'D eq 2024-01-31T24:00:00Z',
  5,
  '2024-01-31T24:00:00Z',
  "$filter: invalid datetime '2024-01-31T24:00:00Z' at position 5",
);
test(rejects, 'D eq 2024-01-31T10:60Z', 5, '2024-01-31T10:60Z');
test(rejects, 'D eq 2024-01-31T10:00:00', 5, '2024-01-31T10:00:00');
test(rejects, "contain(Name,'x')", 0, 'contain', "$filter: unknown function 'contain' at position 0");
test(rejects, "indexof(Name,'x') eq 1", 0, 'indexof');
test(rejects, 'contains(Name)', 0, 'contains');
test(rejects, "tolower(Name, 'x') eq 'y'", 0, 'tolower');
test(rejects, "contains(Name,'x'", 17, '', "$filter: expected ')' at position 17 but found end of input");
test(rejects, "Name in 'a'", 8, "'a'", "$filter: expected '(' at position 8 but found ''a''");
test(rejects, 'Name in ()', 9, ')');
test(rejects, "Name in ('a' 'b')", 13, "'b'", "$filter: expected ')' at position 13 but found ''b''");
test(rejects, "Name eq 'a' and", 15, '');
test(rejects, 'Name # 1', 5, '#', "$filter: unexpected '#' at position 5");
test(rejects, 'Name eq "x"', 8, '"');
test(rejects, 'A/any(c c/B eq 1)', 8, 'c', "$filter: expected ':' at position 8 but found 'c'");
test(rejects, 'Companies/any(c: )', 17, ')', "$filter: expected an expression at position 17 but found ')'");
test(rejects, 'Companies/any(and: 1)', 14, 'and');
test(rejects, 'Name eq 1)', 9, ')', "$filter: unexpected ')' at position 9");
test(rejects, 'A eq 12abc', 5, '12abc', "$filter: invalid number '12abc' at position 5");
test(rejects, 'A eq 1.', 5, '1.');
test(rejects, 'A eq 1e999', 5, '1e999');
test(rejects, 'A eq 1 eq 2', 7, 'eq');
test(rejects, 'A/ eq 1', 2, ' ', "$filter: expected a property name at position 2 but found ' '");
test(rejects, 'A/', 2, '');
test(rejects, 'A /B eq 1', 2, '/');
test(rejects, 'Name eq and', 8, 'and');
test(rejects, 'A eq -', 5, '-');
test(rejects, "Name Eq 'x'", 5, 'Eq');
test(rejects, "Name eq 'x' AND B eq 1", 12, 'AND');
test(rejects, 'A eq $it', 5, '$it');
test(rejects, 'Companies/any(c: c/Id eq 1)/x', 27, '/');

test('nesting up to 100 levels parses; deeper is a syntax error', (t) => {
  const nested = (depth: number) => `${'('.repeat(depth)}A eq 1${')'.repeat(depth)}`;
  t.deepEqual(shape(nested(100)), bin('eq', path('A'), num(1)));
  const error = t.throws(() => parseFilter(nested(101)), { instanceOf: ODataSyntaxError });
  t.is(error?.position, 100);
  t.throws(() => parseFilter(`${'not '.repeat(5000)}A`), { instanceOf: ODataSyntaxError });
  t.throws(() => parseFilter(`${'contains('.repeat(5000)}A`), { instanceOf: ODataSyntaxError });
  t.throws(() => parseFilter(`${'A/any(a:'.repeat(5000)}A`), { instanceOf: ODataSyntaxError });
});

test('long flat chains do not recurse', (t) => {
  const text = Array.from({ length: 20000 }, (_, i) => `A eq ${i}`).join(' or ');
  const expr = parseFilter(text);
  t.is(expr.kind, 'binary');
  t.deepEqual(expr.span, { start: 0, end: text.length });
});

// ---- queries produced by the odata-query package

const generated: Array<[string, Parameters<typeof buildQuery>[0], unknown]> = [
  ['eq', { filter: { Name: "O'Brien" } }, bin('eq', path('Name'), str("O'Brien"))],
  [
    'and/or',
    { filter: { and: [{ A: 1 }, { or: [{ B: 'x' }, { C: { gt: 2.5 } }] }] } },
    bin('and', bin('eq', path('A'), num(1)), bin('or', bin('eq', path('B'), str('x')), bin('gt', path('C'), num(2.5)))),
  ],
  ['contains', { filter: { Name: { contains: 'abc' } } }, call('contains', path('Name'), str('abc'))],
  [
    'injection in contains',
    { filter: { Name: { contains: "x'; DROP TABLE schemes;--" } } },
    call('contains', path('Name'), str("x'; DROP TABLE schemes;--")),
  ],
  ['in', { filter: { Id: { in: ['a', 'b'] } } }, inList(path('Id'), str('a'), str('b'))],
  [
    'navigation and in',
    { filter: { 'Address/City': { ne: 'x' }, Id: { in: [1, 2] } } },
    bin('and', bin('ne', path('Address', 'City'), str('x')), inList(path('Id'), num(1), num(2))),
  ],
  [
    'any lambda',
    { filter: { Companies: { any: { 'Company/Id': 'x' } } } },
    lambda('any', ['Companies'], 'companies', bin('eq', path('companies', 'Company', 'Id'), str('x'))),
  ],
  [
    'all lambda',
    { filter: { Companies: { all: { Role: { ne: 'a' } } } } },
    lambda('all', ['Companies'], 'companies', bin('ne', path('companies', 'Role'), str('a'))),
  ],
  ['empty any', { filter: { Companies: { any: {} } } }, lambda('any', ['Companies'], null, null)],
  [
    'dates',
    { filter: { D: { ge: new Date(Date.UTC(2024, 0, 31)), lt: new Date(Date.UTC(2024, 1, 1, 10, 0, 0, 123)) } } },
    bin(
      'and',
      bin('ge', path('D'), lit('datetime', '2024-01-31T00:00:00.000Z', '2024-01-31T00:00:00.000Z')),
      bin('lt', path('D'), lit('datetime', '2024-02-01T10:00:00.123Z', '2024-02-01T10:00:00.123Z')),
    ),
  ],
  ['not null', { filter: { not: { A: null } } }, not(bin('eq', path('A'), lit('null', null, 'null')))],
  ['function', { filter: { 'tolower(Name)': { eq: 'x' } } }, bin('eq', call('tolower', path('Name')), str('x'))],
];

for (const [title, options, expected] of generated) {
  test(`odata-query output parses: ${title}`, (t) => {
    const query = buildQuery(options);
    const filter = queryOptions(query)['$filter'];
    t.not(filter, undefined, query);
    t.deepEqual(shape(filter ?? ''), expected);
  });
}

// ---- property-based: nothing but ODataSyntaxError escapes

const fragments = [
  ' ',
  '(',
  ')',
  ',',
  '/',
  ':',
  ';',
  "'",
  "''",
  '-',
  '.',
  '$',
  'eq',
  ' and ',
  ' or ',
  'not ',
  ' in ',
  'any',
  'all',
  'A',
  'c',
  'contains',
  'tolower',
  'true',
  'null',
  '1',
  '-2.5e3',
  '2024-01-31',
  'T10:00:00Z',
  "'x'",
  '\t',
  '"',
  '+01:00',
];

test('random strings produce an AST or an ODataSyntaxError', (t) => {
  fuzzParser(parseFilter, fragments);
  t.pass();
});
