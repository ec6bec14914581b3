/**
 * Splits $search text (DESIGN §5) into operands and `OR` markers. An operand is a word, a
 * `"quoted phrase"` or a `Field:`-restricted one of those, optionally negated by a leading `-`.
 * Phrases have no escapes: everything up to the next `"` is the phrase.
 */
import { SearchNode, SearchTerm } from './ast';
import { syntaxError } from './odata-syntax-error';
import { SYNTAX_NODES_SETTING } from './parse-context';

export type SearchToken =
  { kind: 'or'; start: number; end: number } | { kind: 'operand'; node: SearchNode; start: number; end: number };

const OPTION = '$search';
const FIELD_PREFIX = /^([A-Za-z_][A-Za-z0-9_]*):/;

const isSpace = (ch: string) => /\s/.test(ch);

/**
 * `maxNodes` bounds the syntax nodes (operands, `OR`s and `-`s; each word of a quoted phrase is an
 * operand of its own, since Postgres matches a phrase word by word) so a long $search is refused
 * while it is read (MAX_SYNTAX_NODES).
 */
export function scanSearch(text: string, maxNodes = Number.POSITIVE_INFINITY): SearchToken[] {
  const tokens: SearchToken[] = [];
  let nodes = 0;
  let i = 0;
  while (i < text.length) {
    if (isSpace(text.charAt(i))) {
      i++;
      continue;
    }
    const token = scanToken(text, i);
    nodes += nodesOf(token);
    if (nodes > maxNodes) {
      const detail = `syntax nodes exceed the limit of ${maxNodes} (${SYNTAX_NODES_SETTING})`;
      throw syntaxError(OPTION, i, text.slice(i, token.end), detail);
    }
    tokens.push(token);
    i = token.end;
  }
  return tokens;
}

/** A phrase of 4,000 words was one node and one statement that ran past STATEMENT_TIMEOUT_MS. */
function nodesOf(token: SearchToken): number {
  if (token.kind === 'or') return 1;
  const term = token.node.kind === 'not' ? token.node.operand : token.node;
  const words = term.kind === 'term' && term.phrase ? wordCount(term.text) : 1;
  return words + (token.node.kind === 'not' ? 1 : 0);
}

function wordCount(phrase: string): number {
  let words = 0;
  for (let i = 0; i < phrase.length; i++) {
    if (!isSpace(phrase.charAt(i)) && (i === 0 || isSpace(phrase.charAt(i - 1)))) words++;
  }
  return words;
}

function scanToken(text: string, start: number): SearchToken {
  const negated = text.charAt(start) === '-';
  const termStart = negated ? start + 1 : start;
  if (negated && (termStart >= text.length || isSpace(text.charAt(termStart)))) {
    throw syntaxError(OPTION, start, '-', "dangling '-'");
  }
  const term = scanTerm(text, termStart, !negated);
  if (term === 'OR') return { kind: 'or', start, end: start + 2 };
  const node: SearchNode = negated ? { kind: 'not', operand: term, span: { start, end: term.span.end } } : term;
  return { kind: 'operand', node, start, end: node.span.end };
}

/** Returns 'OR' for the bare operator word; `-OR` is a negated term, not an operator. */
function scanTerm(text: string, start: number, operatorAllowed: boolean): SearchTerm | 'OR' {
  if (text.charAt(start) === '"') return scanPhrase(text, start, start, null);
  let end = start;
  while (end < text.length && !isSpace(text.charAt(end)) && text.charAt(end) !== '"') end++;
  const word = text.slice(start, end);
  if (word === 'OR' && operatorAllowed) return 'OR';

  const field = FIELD_PREFIX.exec(word);
  if (!field) {
    checkPrefix(word, start);
    return { kind: 'term', text: word, phrase: false, field: null, span: { start, end } };
  }
  const fieldName = field[1] ?? '';
  const rest = word.slice(field[0].length);
  if (rest !== '') {
    checkPrefix(rest, start + field[0].length);
    return { kind: 'term', text: rest, phrase: false, field: fieldName, span: { start, end } };
  }
  if (text.charAt(end) === '"') return scanPhrase(text, start, end, fieldName);
  throw syntaxError(OPTION, start, word, `empty field term '${word}'`);
}

const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/**
 * DESIGN §13: an explicit prefix `x*` needs two or more characters before the `*` (a one-letter
 * prefix would match a large part of every index). A plain loop from the end: a regular
 * expression anchored there would backtrack quadratically on a long word.
 */
function checkPrefix(word: string, start: number): void {
  if (!word.endsWith('*')) return;
  let end = word.length;
  while (end > 0 && word.charAt(end - 1) === '*') end--;
  const chars = [...word.slice(0, end)];
  let letters = 0;
  for (let i = chars.length - 1; i >= 0 && letters < 2 && LETTER_OR_DIGIT.test(chars[i] ?? ''); i--) letters++;
  if (letters < 2) {
    throw syntaxError(OPTION, start, word, `the prefix '${word}' needs at least 2 characters before '*'`);
  }
}

function scanPhrase(text: string, start: number, quote: number, field: string | null): SearchTerm {
  const close = text.indexOf('"', quote + 1);
  if (close < 0) throw syntaxError(OPTION, quote, text.slice(quote), 'unterminated phrase');
  const phrase = text.slice(quote + 1, close);
  if (phrase.trim() === '') {
    throw syntaxError(OPTION, quote, text.slice(quote, close + 1), 'empty phrase');
  }
  return { kind: 'term', text: phrase, phrase: true, field, span: { start, end: close + 1 } };
}
