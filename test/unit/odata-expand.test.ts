import test from 'ava';
import buildQuery from 'odata-query';
import { ExpandItem, ODataSyntaxError, parseExpand } from '../../domain/odata';
import { stripSpans, queryOptions, rejectsMacro } from '../support/odata-parsing';
import { fuzzParser } from '../support/odata-parsing';

const shape = (text: string) => stripSpans(parseExpand(text));
const item = (path: string[], options: Record<string, unknown> = {}) => ({ path, options });

const rejects = rejectsMacro('$expand', parseExpand);

test('a single navigation property', (t) => {
  t.deepEqual(parseExpand('Address'), [{ path: ['Address'], options: {}, span: { start: 0, end: 7 } }]);
});

test('several items and a multi-segment path', (t) => {
  t.deepEqual(parseExpand('Address, Companies,Address/Country'), [
    { path: ['Address'], options: {}, span: { start: 0, end: 7 } },
    { path: ['Companies'], options: {}, span: { start: 9, end: 18 } },
    { path: ['Address', 'Country'], options: {}, span: { start: 19, end: 34 } },
  ]);
});

test('nested $expand', (t) => {
  t.deepEqual(parseExpand('Address($expand=Country)'), [
    {
      path: ['Address'],
      options: { expand: [{ path: ['Country'], options: {}, span: { start: 16, end: 23 } }] },
      span: { start: 0, end: 24 },
    },
  ] as ExpandItem[]);
});

test('several nested options; quoted ; and ) stay inside the string', (t) => {
  const text = "Companies($expand=Company;$orderby=PercentageShare desc;$top=5;$filter=Role eq 'a;b)')";
  t.deepEqual(parseExpand(text), [
    {
      path: ['Companies'],
      options: {
        expand: [{ path: ['Company'], options: {}, span: { start: 18, end: 25 } }],
        orderby: [{ path: ['PercentageShare'], direction: 'desc', span: { start: 35, end: 55 } }],
        top: 5,
        filter: {
          kind: 'binary',
          op: 'eq',
          left: { kind: 'path', segments: ['Role'], span: { start: 71, end: 75 } },
          right: { kind: 'literal', type: 'string', value: 'a;b)', raw: "'a;b)'", span: { start: 79, end: 85 } },
          span: { start: 71, end: 85 },
        },
      },
      span: { start: 0, end: 86 },
    },
  ] as ExpandItem[]);
});

test('deep nesting and siblings inside nested $expand', (t) => {
  t.deepEqual(shape('Companies($expand=Company($expand=Address($expand=Country),Market)),Notes'), [
    item(['Companies'], {
      expand: [
        item(['Company'], {
          expand: [item(['Address'], { expand: [item(['Country'])] }), item(['Market'])],
        }),
      ],
    }),
    item(['Notes']),
  ]);
});

test('$skip, $count, $top and a $select kept as written (the root ignores it, /odata parses it)', (t) => {
  t.deepEqual(shape('Companies($select=Name,Id;$skip=10;$count=true;$top=0)'), [
    item(['Companies'], { select: { text: 'Name,Id', at: 18 }, skip: 10, count: true, top: 0 }),
  ]);
  t.deepEqual(shape('Companies($count=false)'), [item(['Companies'], { count: false })]);
  t.deepEqual(shape('Companies($select=*)'), [item(['Companies'], { select: { text: '*', at: 18 } })]);
  t.deepEqual(shape('Companies($select=Address/City,Company($select=Name))'), [
    item(['Companies'], { select: { text: 'Address/City,Company($select=Name)', at: 18 } }),
  ]);
});

test('nested $filter with parentheses, functions and lambdas', (t) => {
  t.deepEqual(shape("Developments($filter=(contains(Name,'(x)') or Id eq 'k') and Companies/any(c: c/Role eq ')'))"), [
    item(['Developments'], {
      filter: {
        kind: 'binary',
        op: 'and',
        left: {
          kind: 'binary',
          op: 'or',
          left: {
            kind: 'call',
            name: 'contains',
            args: [
              { kind: 'path', segments: ['Name'] },
              { kind: 'literal', type: 'string', value: '(x)', raw: "'(x)'" },
            ],
          },
          right: {
            kind: 'binary',
            op: 'eq',
            left: { kind: 'path', segments: ['Id'] },
            right: { kind: 'literal', type: 'string', value: 'k', raw: "'k'" },
          },
        },
        right: {
          kind: 'lambda',
          op: 'any',
          collection: ['Companies'],
          variable: 'c',
          body: {
            kind: 'binary',
            op: 'eq',
            left: { kind: 'path', segments: ['c', 'Role'] },
            right: { kind: 'literal', type: 'string', value: ')', raw: "')'" },
          },
        },
      },
    }),
  ]);
});

test('nested $orderby with several keys', (t) => {
  t.deepEqual(shape('Companies($orderby=Company/Name asc, PercentageShare desc,Role)'), [
    item(['Companies'], {
      orderby: [
        { path: ['Company', 'Name'], direction: 'asc' },
        { path: ['PercentageShare'], direction: 'desc' },
        { path: ['Role'], direction: 'asc' },
      ],
    }),
  ]);
});

test('unknown option inside parentheses is named in the error', (t) => {
  const error = t.throws(() => parseExpand('Address($levels=2)'), { instanceOf: ODataSyntaxError });
  t.is(error?.message, "$expand: unknown option '$levels' at position 8");
  t.is(error?.offending, '$levels');
});

// Positions of nested errors are offsets into the whole $expand text.
test(rejects, "Companies($filter=Role eqq 'a')", 23, 'eqq', "$expand: unexpected 'eqq' at position 23");
test(
  rejects,
  "Address,Companies($top=1;$filter=Role eq 'a' and)",
  48,
  ')',
  "$expand: expected an expression at position 48 but found ')'",
);
test(rejects, "Companies($filter=Role eq 'a;b)", 26, "'a;b)", '$expand: unterminated string literal at position 26');
test(rejects, 'Companies($orderby=Name DESC)', 24, 'DESC');
test(rejects, 'Companies($expand=Company($expand=Address($filter=City eq 2024-13-01)))', 58, '2024-13-01');
test(rejects, 'Companies($expand=Company($foo=1))', 26, '$foo', "$expand: unknown option '$foo' at position 26");
test(rejects, 'Address($expand=Country', 23, '', "$expand: expected ')' at position 23 but found end of input");
test(rejects, 'Address(', 8, '');
test(rejects, 'Address()', 8, ')');
test(rejects, 'Address($top=1;)', 15, ')');
test(rejects, 'Address($top=-1)', 13, '-1', "$expand: expected a non-negative integer at position 13 but found '-1'");
test(rejects, 'Address($top=1.5)', 13, '1.5');
test(rejects, 'Address($skip=x)', 14, 'x');
test(rejects, 'Address($count=yes)', 15, 'yes', "$expand: expected 'true' or 'false' at position 15 but found 'yes'");
test(rejects, 'Address($top=1;$top=2)', 15, '$top', "$expand: duplicate option '$top' at position 15");
test(rejects, 'Address(filter=Id eq 1)', 8, 'filter');
test(rejects, 'Address($top 1)', 13, '1', "$expand: expected '=' at position 13 but found '1'");
test(rejects, 'Address($top=1 $skip=2)', 15, '$skip');
test(rejects, 'Address,', 8, '', '$expand: expected a navigation property at position 8 but found end of input');
test(rejects, 'Address;Companies', 7, ';');
test(rejects, '', 0, '');
test(rejects, '*', 0, '*');
test(rejects, 'Address)', 7, ')');
test(rejects, 'Address/', 8, '');
test(rejects, 'Address($filter=Id eq 1', 23, '');

test('expand nesting is bounded', (t) => {
  const deep = (depth: number) => `${'A($expand='.repeat(depth)}B${')'.repeat(depth)}`;
  t.is(parseExpand(deep(50)).length, 1);
  t.throws(() => parseExpand(deep(5000)), { instanceOf: ODataSyntaxError });
});

// ---- queries produced by the odata-query package

test('odata-query expand output parses', (t) => {
  const expandOf = (options: Parameters<typeof buildQuery>[0]) => queryOptions(buildQuery(options))['$expand'] ?? '';
  t.deepEqual(shape(expandOf({ expand: 'Address/Country' })), [item(['Address'], { expand: [item(['Country'])] })]);
  t.deepEqual(shape(expandOf({ expand: ['Address', 'Companies'] })), [item(['Address']), item(['Companies'])]);
  t.deepEqual(
    shape(
      expandOf({
        expand: {
          Companies: {
            expand: { Company: { select: ['Name'] } },
            orderBy: [['PercentageShare', 'desc']],
            top: 5,
            skip: 1,
            count: true,
            filter: { Role: 'a;b)' },
          },
        },
      }),
    ),
    [
      item(['Companies'], {
        expand: [item(['Company'], { select: { text: 'Name', at: 34 } })],
        orderby: [{ path: ['PercentageShare'], direction: 'desc' }],
        top: 5,
        skip: 1,
        count: true,
        filter: {
          kind: 'binary',
          op: 'eq',
          left: { kind: 'path', segments: ['Role'] },
          right: { kind: 'literal', type: 'string', value: 'a;b)', raw: "'a;b)'" },
        },
      }),
    ],
  );
});

// ---- property-based

const fragments = [
  'Address',
  'Companies',
  '(',
  ')',
  ',',
  ';',
  '/',
  '=',
  ' ',
  '$expand=',
  '$filter=',
  '$orderby=',
  '$top=',
  '$skip=',
  '$count=',
  '$select=',
  'true',
  '5',
  '-1',
  "'a;b)'",
  "'",
  ' eq ',
  ' desc',
  '*',
  '$levels=',
];

test('random strings produce an AST or an ODataSyntaxError', (t) => {
  fuzzParser(parseExpand, fragments);
  t.pass();
});
