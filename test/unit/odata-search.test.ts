import test from 'ava';
import { parseSearch, SearchNode } from '../../domain/odata';
import { stripSpans, rejectsMacro } from '../support/odata-parsing';
import { fuzzParser } from '../support/odata-parsing';

const shape = (text: string) => stripSpans(parseSearch(text));
const term = (text: string, field: string | null = null) => ({ kind: 'term', text, phrase: false, field });
const phrase = (text: string, field: string | null = null) => ({ kind: 'term', text, phrase: true, field });
const not = (operand: unknown) => ({ kind: 'not', operand });
const and = (...items: unknown[]) => ({ kind: 'and', items });
const or = (...items: unknown[]) => ({ kind: 'or', items });

const rejects = rejectsMacro('$search', parseSearch);

test('a single term is not wrapped', (t) => {
  t.deepEqual(parseSearch('acme'), {
    kind: 'term',
    text: 'acme',
    phrase: false,
    field: null,
    span: { start: 0, end: 4 },
  });
});

test('whitespace-separated terms are ANDed', (t) => {
  t.deepEqual(parseSearch('acme  london'), {
    kind: 'and',
    items: [
      { kind: 'term', text: 'acme', phrase: false, field: null, span: { start: 0, end: 4 } },
      { kind: 'term', text: 'london', phrase: false, field: null, span: { start: 6, end: 12 } },
    ],
    span: { start: 0, end: 12 },
  } as SearchNode);
  t.deepEqual(shape(' a\tb \n c '), and(term('a'), term('b'), term('c')));
});

test('OR binds tighter than the implicit AND', (t) => {
  t.deepEqual(parseSearch('a b OR c'), {
    kind: 'and',
    items: [
      { kind: 'term', text: 'a', phrase: false, field: null, span: { start: 0, end: 1 } },
      {
        kind: 'or',
        items: [
          { kind: 'term', text: 'b', phrase: false, field: null, span: { start: 2, end: 3 } },
          { kind: 'term', text: 'c', phrase: false, field: null, span: { start: 7, end: 8 } },
        ],
        span: { start: 2, end: 8 },
      },
    ],
    span: { start: 0, end: 8 },
  } as SearchNode);
  t.deepEqual(shape('a OR b c OR d'), and(or(term('a'), term('b')), or(term('c'), term('d'))));
  t.deepEqual(shape('a OR b OR c'), or(term('a'), term('b'), term('c')));
});

test('lower-case or and words containing OR are plain terms', (t) => {
  t.deepEqual(shape('a or b'), and(term('a'), term('or'), term('b')));
  t.deepEqual(shape('ORACLE ORe'), and(term('ORACLE'), term('ORe')));
});

test('quoted phrases', (t) => {
  t.deepEqual(parseSearch('"canary wharf"'), {
    kind: 'term',
    text: 'canary wharf',
    phrase: true,
    field: null,
    span: { start: 0, end: 14 },
  });
  t.deepEqual(shape('"a b" OR c'), or(phrase('a b'), term('c')));
  t.deepEqual(shape('"OR"'), phrase('OR'));
  t.deepEqual(shape('"x -y Name:z"'), phrase('x -y Name:z'));
});

test('a leading - negates a term, a phrase or a field term', (t) => {
  t.deepEqual(parseSearch('-term'), {
    kind: 'not',
    operand: { kind: 'term', text: 'term', phrase: false, field: null, span: { start: 1, end: 5 } },
    span: { start: 0, end: 5 },
  });
  t.deepEqual(shape('a -"a phrase"'), and(term('a'), not(phrase('a phrase'))));
  t.deepEqual(shape('-Name:acme'), not(term('acme', 'Name')));
  t.deepEqual(shape('-OR'), not(term('OR')));
  t.deepEqual(shape('a -b OR c'), and(term('a'), or(not(term('b')), term('c'))));
  t.deepEqual(shape('pre-let'), term('pre-let'));
});

test('Field:term and Field:"phrase" restrict to a field', (t) => {
  t.deepEqual(parseSearch('Postcode:E14'), {
    kind: 'term',
    text: 'E14',
    phrase: false,
    field: 'Postcode',
    span: { start: 0, end: 12 },
  });
  t.deepEqual(parseSearch('City:"New York"'), {
    kind: 'term',
    text: 'New York',
    phrase: true,
    field: 'City',
    span: { start: 0, end: 15 },
  });
  t.deepEqual(
    shape('tower City:London -Company:"Acme Ltd" OR Tag:x'),
    and(term('tower'), term('London', 'City'), or(not(phrase('Acme Ltd', 'Company')), term('x', 'Tag'))),
  );
  // Not an identifier before the colon: a plain term.
  t.deepEqual(shape('10:30'), term('10:30'));
});

test('combined example from the design', (t) => {
  t.deepEqual(
    shape('"canary wharf" tower OR block -demolished SchemeName:riverside'),
    and(
      phrase('canary wharf'),
      or(term('tower'), term('block')),
      not(term('demolished')),
      term('riverside', 'SchemeName'),
    ),
  );
});

test(rejects, '"unterminated', 0, '"unterminated', '$search: unterminated phrase at position 0');
test(rejects, 'a -"open', 3, '"open');
test(rejects, 'Name:"open', 5, '"open');
test(rejects, 'OR a', 0, 'OR', "$search: dangling 'OR' at position 0");
test(rejects, 'a OR', 2, 'OR', "$search: dangling 'OR' at position 2");
test(rejects, 'a OR OR b', 2, 'OR');
test(rejects, 'OR', 0, 'OR');
test(rejects, 'a -', 2, '-', "$search: dangling '-' at position 2");
test(rejects, '- a', 0, '-');
test(rejects, 'a Name:', 2, 'Name:', "$search: empty field term 'Name:' at position 2");
test(rejects, '-Name: x', 1, 'Name:');
test(rejects, '', 0, '', '$search: expected a search term at position 0 but found end of input');
test(rejects, '  ', 2, '');
test(rejects, 'a ""', 2, '""', '$search: empty phrase at position 2');

test('random strings produce an AST or an ODataSyntaxError', (t) => {
  fuzzParser(parseSearch, ['a', 'OR', ' ', '-', '"', 'Name:', ':', '\t', 'x y']);
  t.pass();
});
