/**
 * Splits $search text (DESIGN §5) into operands and `OR` markers. An operand is a word, a
 * `"quoted phrase"` or a `Field:`-restricted one of those, optionally negated by a leading `-`.
 * Phrases have no escapes: everything up to the next `"` is the phrase.
 */
import { SearchNode, SearchTerm } from './ast';
import { syntaxError } from './odata-syntax-error';

export type SearchToken =
  { kind: 'or'; start: number; end: number } | { kind: 'operand'; node: SearchNode; start: number; end: number };

const OPTION = '$search';
const FIELD_PREFIX = /^([A-Za-z_][A-Za-z0-9_]*):/;

const isSpace = (ch: string) => /\s/.test(ch);

export function scanSearch(text: string): SearchToken[] {
  const tokens: SearchToken[] = [];
  let i = 0;
  while (i < text.length) {
    if (isSpace(text.charAt(i))) {
      i++;
      continue;
    }
    const token = scanToken(text, i);
    tokens.push(token);
    i = token.end;
  }
  return tokens;
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
  if (!field) return { kind: 'term', text: word, phrase: false, field: null, span: { start, end } };
  const fieldName = field[1] ?? '';
  const rest = word.slice(field[0].length);
  if (rest !== '') {
    return { kind: 'term', text: rest, phrase: false, field: fieldName, span: { start, end } };
  }
  if (text.charAt(end) === '"') return scanPhrase(text, start, end, fieldName);
  throw syntaxError(OPTION, start, word, `empty field term '${word}'`);
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
