import test from 'ava';
import fc from 'fast-check';
import { ODataSyntaxError, parseExpand, parseFilter, parseOrderBy, parseSearch } from '../../domain/odata';
import { parseReadOptions } from '../../domain/queries/read-options';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';
import { DomainError } from '../../domain/errors/domain-error';

/** DESIGN §13 limits enforced while parsing, before any SQL exists. */

function syntaxErrorOf(fn: () => unknown): ODataSyntaxError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ODataSyntaxError) return err;
    throw err;
  }
  throw new Error('expected an ODataSyntaxError');
}

function domainErrorOf(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
}

test('syntax nodes are counted while parsing: names, operators, keywords and literals', (t) => {
  // `A eq 1` is 3 nodes; 25 of them joined by 24 `or`s is 99.
  const ninetyNine = Array.from({ length: 25 }, (_, i) => `A eq ${i}`).join(' or ');
  t.notThrows(() => parseFilter(ninetyNine, 100));
  const atLimit = syntaxErrorOf(() => parseFilter(`${ninetyNine} or`, 100));
  t.notRegex(atLimit.message, /MAX_SYNTAX_NODES/, 'the 100th node is allowed');
  const err = syntaxErrorOf(() => parseFilter(`${ninetyNine} or B eq 2`, 100));
  t.is(err.option, '$filter');
  t.is(
    err.message,
    `$filter: syntax nodes exceed the limit of 100 (MAX_SYNTAX_NODES) at position ${ninetyNine.length + 4}`,
  );
  t.notThrows(() => parseFilter(`${ninetyNine} or B eq 2`), 'no limit unless given');
  t.regex(syntaxErrorOf(() => parseOrderBy(Array(51).fill('A/B').join(','), 100)).message, /MAX_SYNTAX_NODES/);
  t.regex(
    syntaxErrorOf(() => parseExpand(`A($filter=${Array(40).fill('X eq 1').join(' and ')})`, 100)).message,
    /^\$expand: syntax nodes exceed/,
  );
  t.regex(syntaxErrorOf(() => parseSearch(Array(101).fill('w').join(' '), 100)).message, /^\$search: syntax nodes/);
  t.regex(syntaxErrorOf(() => parseSearch(Array(51).fill('-w').join(' '), 100)).message, /MAX_SYNTAX_NODES/);
  // Each word of a phrase is an operand: a phrase of 4,000 words ran one statement past its time limit.
  t.notThrows(() => parseSearch(`"${Array(100).fill('ab').join(' ')}"`, 100));
  t.regex(syntaxErrorOf(() => parseSearch(`"${Array(101).fill('ab').join('  ')}"`, 100)).message, /MAX_SYNTAX_NODES/);
  t.regex(
    syntaxErrorOf(() => parseSearch(`-Name:"${Array(100).fill('ab').join(' ')}"`, 100)).message,
    /MAX_SYNTAX_NODES/,
  );
});

test('string literals with U+0000 or unpaired surrogates are syntax errors naming the option', (t) => {
  for (const text of ["A eq 'a\u0000'", "A eq '\ud800x'", "A eq 'x\udc00'", "contains(A,'\udfff\ud800')"]) {
    const err = syntaxErrorOf(() => parseFilter(text));
    t.regex(err.message, /^\$filter: a string literal holds U\+0000 or an unpaired surrogate at position/);
  }
  t.notThrows(() => parseFilter("A eq '\ud83d\ude00'"), 'a paired surrogate (emoji) is fine');
  t.regex(syntaxErrorOf(() => parseExpand("B($filter=A eq '\u0000')")).message, /^\$expand: a string literal/);
});

test('$search: an explicit prefix needs 2+ characters before the *', (t) => {
  for (const text of ['a*', 'é*', 'x OR b*', 'Name:a*', '-a*', '*', 'a**', '😀😀*']) {
    t.regex(syntaxErrorOf(() => parseSearch(text)).message, /needs at least 2 characters before '\*'/, text);
  }
  for (const text of ['ab*', 'éa*', 'a', 'Name:ab*', '"a*"', '日本*']) t.notThrows(() => parseSearch(text), text);
  // Long words: decided from the end of the word, whatever its length.
  t.notThrows(() => parseSearch(`${'a'.repeat(15000)}*`));
  t.regex(syntaxErrorOf(() => parseSearch(`${'a'.repeat(15000)}-b*`)).message, /needs at least 2 characters/);
});

test('parseReadOptions: expand depth, expansions, nested $top and $skip, and MAX_SKIP', (t) => {
  const limits = {
    maxTop: 1000,
    maxExpandDepth: 3,
    maxExpansions: 10,
    maxExpandTop: 100,
    maxSyntaxNodes: 100,
    maxSkip: 1000,
    countLimit: 10_000,
    searchCountLimit: 1000,
  };
  const fails = (query: Record<string, string>, pattern: RegExp) =>
    t.regex(domainErrorOf(() => parseReadOptions(query, limits)).message, pattern, JSON.stringify(query));
  fails({ $expand: 'A/B/C/D' }, /depth 4 exceeds the limit of 3 \(MAX_EXPAND_DEPTH\)/);
  fails({ $expand: 'A($expand=B/C($expand=D))' }, /depth 4/);
  fails({ $expand: 'A/B,C/D,E/F,G/H,I/J,K' }, /11 expansions exceed the limit of 10/);
  fails({ $expand: 'A($top=101)' }, /MAX_EXPAND_TOP/);
  fails({ $expand: 'A($expand=B($top=101))' }, /inside 'B'.*MAX_EXPAND_TOP/);
  fails({ $expand: 'A($skip=1001)' }, /MAX_SKIP/);
  fails({ $skip: '1001' }, /\$skip: 1001 exceeds the limit of 1000 \(MAX_SKIP\).*Id gt/);
  fails({ $filter: "A eq '\u0000'" }, /^\$filter: /);
  fails({ $search: '\u0000' }, /^\$search: holds U\+0000/);
  fails({ $select: '\ud800' }, /^\$select: holds/);
  fails({ ['$x\u0000']: '1' }, /^an unknown query option$/);
  t.is(parseReadOptions({ $expand: 'A/B/C', $skip: '1000' }, limits).skip, 1000);
  t.is(parseReadOptions({}, limits).expandTop, 100);
  t.is(parseReadOptions({ constructor: 'x', __proto__: 'y' } as Record<string, unknown>, limits).top, 60);
});

test('random option texts under a node limit end in an AST or an ODataSyntaxError', (t) => {
  const word = fc.constantFrom(
    'A',
    'B/C',
    'eq',
    'and',
    'or',
    'not',
    '1',
    "'x'",
    '(',
    ')',
    ',',
    'any',
    'in',
    '*',
    '-',
    '"',
  );
  const text = fc.array(word, { maxLength: 300 }).map((parts) => parts.join(' '));
  let cases = 0;
  fc.assert(
    fc.property(text, (input) => {
      cases++;
      for (const parse of [parseFilter, parseOrderBy, parseExpand, parseSearch]) {
        try {
          parse(input, 100);
        } catch (err) {
          if (!(err instanceof ODataSyntaxError)) return false;
        }
      }
      return true;
    }),
    { seed: 1013, numRuns: 300 },
  );
  t.log(`${cases} cases`);
  t.pass();
});

test('the default page of 60 is capped by MAX_TOP too', (t) => {
  const limits = { ...DEFAULT_READ_LIMITS, maxTop: 10 };
  t.is(parseReadOptions({}, limits).top, 10);
  t.is(parseReadOptions({}, DEFAULT_READ_LIMITS).top, 60);
});
