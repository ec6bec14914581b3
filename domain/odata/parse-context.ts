/**
 * Cursor over a QueryLexer plus the helpers every recursive-descent parser here needs: punctuation
 * checks, uniform error messages, and a nesting guard so hostile input ends in an ODataSyntaxError
 * instead of a stack overflow.
 */
import { describeFound, ODataSyntaxError, syntaxError } from './odata-syntax-error';
import { QueryLexer, Token } from './query-lexer';

export const MAX_NESTING = 100;

/** How a limit on syntax nodes is named in messages (DESIGN §13). */
export const SYNTAX_NODES_SETTING = 'MAX_SYNTAX_NODES';

export class ParseContext {
  private depth = 0;
  private nodes = 0;
  readonly lexer: QueryLexer;

  /**
   * `maxNodes` bounds the syntax nodes (every consumed token but punctuation: names, operators,
   * keywords, literals), so a long option is refused while it is read, before any SQL exists.
   */
  constructor(
    text: string,
    option: string,
    private readonly maxNodes = Number.POSITIVE_INFINITY,
  ) {
    this.lexer = new QueryLexer(text, option);
  }

  get option(): string {
    return this.lexer.option;
  }

  peek(offset = 0): Token {
    return this.lexer.peek(offset);
  }

  next(): Token {
    const token = this.lexer.next();
    if (token.kind !== 'punct' && token.kind !== 'end' && ++this.nodes > this.maxNodes) {
      const detail = `syntax nodes exceed the limit of ${this.maxNodes} (${SYNTAX_NODES_SETTING})`;
      throw syntaxError(this.option, token.start, token.text, detail);
    }
    return token;
  }

  /** Consumes the next token when it is the punctuation `ch`. */
  accept(ch: string): Token | null {
    return isPunct(this.peek(), ch) ? this.next() : null;
  }

  expect(ch: string): Token {
    const token = this.peek();
    if (!isPunct(token, ch)) throw this.expected(`'${ch}'`, token);
    return this.next();
  }

  /** Runs a parser one nesting level deeper; `opener` is the token that opened the level. */
  nested<T>(opener: Token, parse: () => T): T {
    if (this.depth >= MAX_NESTING) {
      const detail = `nesting deeper than ${MAX_NESTING} levels`;
      throw syntaxError(this.option, opener.start, opener.text, detail);
    }
    this.depth++;
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  /** Fails unless the whole text has been consumed. */
  expectEnd(): void {
    const token = this.peek();
    if (token.kind !== 'end') throw this.unexpected(token);
  }

  unexpected(token: Token): ODataSyntaxError {
    return syntaxError(this.option, token.start, token.text, `unexpected ${describeFound(token.text)}`);
  }

  expected(what: string, token: Token): ODataSyntaxError {
    return this.expectedAt(what, token.start, token.text);
  }

  expectedAt(what: string, position: number, found: string): ODataSyntaxError {
    return syntaxError(this.option, position, found, `expected ${what}`, `but found ${describeFound(found)}`);
  }

  error(position: number, offending: string, detail: string): ODataSyntaxError {
    return syntaxError(this.option, position, offending, detail);
  }

  /**
   * The identifier directly after `previous` (no whitespace: OData paths are written `A/B`).
   * Consumes and returns it, or fails naming what was expected.
   */
  adjacentIdentifier(previous: Token, what: string): Token {
    const token = this.peek();
    if (token.start !== previous.end) {
      throw this.expectedAt(what, previous.end, this.lexer.text.charAt(previous.end));
    }
    if (token.kind !== 'identifier') throw this.expected(what, token);
    return this.next();
  }
}

export function isPunct(token: Token, ch: string): boolean {
  return token.kind === 'punct' && token.text === ch;
}

/** Keywords are lower-case and case-sensitive, as in OData. */
export function isKeyword(token: Token, word: string): boolean {
  return token.kind === 'identifier' && token.text === word;
}
