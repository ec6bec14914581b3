import { badRequest } from '../../domain/errors/domain-error';

/**
 * Collects bound parameters and hands out table aliases while one read statement is compiled.
 * Every client value becomes a `?` placeholder (knex raw bindings); nothing a client sends is ever
 * spliced into SQL text.
 */
export class SqlContext {
  readonly params: unknown[] = [];
  private aliasCount = 0;

  /**
   * `prefix` keeps aliases of separately compiled parts of one statement apart. `expandTop` caps
   * an expanded collection that has no `$top` of its own (MAX_EXPAND_TOP); exports leave it unset.
   */
  constructor(
    private readonly prefix = 't',
    readonly expandTop?: number,
  ) {}

  param(value: unknown, cast?: string): string {
    this.params.push(value);
    return cast ? `?::${cast}` : '?';
  }

  alias(): string {
    this.aliasCount += 1;
    return `${this.prefix}${this.aliasCount}`;
  }
}

/** A client mistake found while compiling a query: 400 naming the option, text and position. */
export function queryError(option: string, message: string, position?: number): Error {
  return badRequest(`${option}: ${message}${position === undefined ? '' : ` at position ${position}`}`);
}
