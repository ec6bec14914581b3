/**
 * Tokenizer shared by $filter, $orderby and $expand. It is lazy, so the first error reported is the
 * leftmost one, and one instance can serve a whole $expand text with its nested options (positions
 * stay absolute). Strings are single tokens, so `;` or `)` inside quotes never split an option.
 */
import { describeFound, syntaxError } from './odata-syntax-error';
import { isValidTemporal, TEMPORAL_PATTERN } from './temporal-literal';
import { isStorableText } from '../text/storable-text';

export type Token =
  | { kind: 'identifier' | 'option' | 'punct' | 'end'; text: string; start: number; end: number }
  | { kind: 'string'; text: string; value: string; start: number; end: number }
  | { kind: 'number'; text: string; value: number; start: number; end: number }
  | { kind: 'date' | 'datetime'; text: string; start: number; end: number };

const PUNCTUATION = new Set(['(', ')', ',', '/', ':', ';', '=', '*', '.']);
const NUMBER_PATTERN = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const DATE_START_PATTERN = /\d{4}-\d/y;
/** Characters that would glue onto a number or date, making it malformed rather than two tokens. */
const LITERAL_RUN_PATTERN = /[A-Za-z0-9_.:+-]*/y;

const isDigit = (ch: string) => ch >= '0' && ch <= '9';
const isIdentifierStart = (ch: string) => (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch === '_';
const isIdentifierPart = (ch: string) => isIdentifierStart(ch) || isDigit(ch);

function matchAt(pattern: RegExp, text: string, at: number): RegExpExecArray | null {
  pattern.lastIndex = at;
  return pattern.exec(text);
}

export class QueryLexer {
  private position = 0;
  private readonly lookahead: Token[] = [];

  constructor(
    readonly text: string,
    readonly option: string,
  ) {}

  /** The token `offset` places ahead, without consuming it. */
  peek(offset = 0): Token {
    while (this.lookahead.length <= offset) this.lookahead.push(this.scan());
    return this.lookahead[offset] as Token;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead.shift();
    return token;
  }

  private scan(): Token {
    const { text } = this;
    let i = this.position;
    while (text.charAt(i) === ' ' || text.charAt(i) === '\t') i++;
    const token = this.scanAt(i);
    this.position = token.end;
    return token;
  }

  private scanAt(start: number): Token {
    const { text } = this;
    if (start >= text.length) return { kind: 'end', text: '', start, end: start };
    const ch = text.charAt(start);
    const after = text.charAt(start + 1);
    if (PUNCTUATION.has(ch)) return { kind: 'punct', text: ch, start, end: start + 1 };
    if (ch === "'") return this.scanString(start);
    if (isIdentifierStart(ch)) return this.scanWord('identifier', start, start);
    if (ch === '$' && isIdentifierStart(after)) return this.scanWord('option', start, start + 1);
    if (isDigit(ch) && matchAt(DATE_START_PATTERN, text, start)) return this.scanTemporal(start);
    if (isDigit(ch) || (ch === '-' && isDigit(after))) return this.scanNumber(start);
    const offending = String.fromCodePoint(text.codePointAt(start) ?? 0);
    throw syntaxError(this.option, start, offending, `unexpected ${describeFound(offending)}`);
  }

  private scanWord(kind: 'identifier' | 'option', start: number, from: number): Token {
    let end = from;
    while (isIdentifierPart(this.text.charAt(end))) end++;
    return { kind, text: this.text.slice(start, end), start, end };
  }

  /** `'O''Brien'`: a doubled quote is an escaped quote; anything else (even `;` or `)`) is content. */
  private scanString(start: number): Token {
    const { text } = this;
    let i = start + 1;
    for (;;) {
      const quote = text.indexOf("'", i);
      if (quote < 0) {
        throw syntaxError(this.option, start, text.slice(start), 'unterminated string literal');
      }
      if (text.charAt(quote + 1) === "'") {
        i = quote + 2;
        continue;
      }
      const end = quote + 1;
      const value = text.slice(start + 1, quote).replaceAll("''", "'");
      if (!isStorableText(value)) {
        throw syntaxError(this.option, start, '', 'a string literal holds U+0000 or an unpaired surrogate');
      }
      return { kind: 'string', text: text.slice(start, end), value, start, end };
    }
  }

  private literalRun(start: number): string {
    const run = matchAt(LITERAL_RUN_PATTERN, this.text, start);
    return run ? run[0] : '';
  }

  private scanNumber(start: number): Token {
    const match = matchAt(NUMBER_PATTERN, this.text, start);
    const raw = match ? match[0] : '';
    const run = this.literalRun(start);
    // `12abc` or `1.` is one malformed literal, not a number followed by something else.
    if (raw === '' || /^[A-Za-z0-9_.]/.test(this.text.charAt(start + raw.length))) {
      throw syntaxError(this.option, start, run, `invalid number '${run}'`);
    }
    const value = Number(raw);
    if (!Number.isFinite(value)) {
      throw syntaxError(this.option, start, raw, `number '${raw}' out of range`);
    }
    return { kind: 'number', text: raw, value, start, end: start + raw.length };
  }

  private scanTemporal(start: number): Token {
    const match = matchAt(TEMPORAL_PATTERN, this.text, start);
    const run = this.literalRun(start);
    const isDateTime = /[Tt]/.test(run);
    const label = isDateTime ? 'datetime' : 'date';
    if (!match || match[0] !== run || !isValidTemporal(match)) {
      throw syntaxError(this.option, start, run, `invalid ${label} '${run}'`);
    }
    return { kind: isDateTime ? 'datetime' : 'date', text: run, start, end: start + run.length };
  }
}
