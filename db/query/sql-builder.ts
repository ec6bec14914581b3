/**
 * Collects the bound parameters and table aliases of one read (its page, its count, its document).
 * Every client value becomes a placeholder; nothing a client sends is ever spliced into SQL text.
 * `param` hands out a numbered marker rather than a bare `?`, so fragments may be built in any
 * order and shared between statements (the page and its count share one WHERE): `statement`
 * turns the markers of a finished text into knex `?` bindings in text order.
 */
export class SqlBuilder {
  private readonly values: unknown[] = [];
  private aliasCount = 0;

  param(value: unknown, cast?: string): string {
    const index = this.values.push(value) - 1;
    return `${MARK}${index}${MARK}${cast ? `::${cast}` : ''}`;
  }

  /** SQL written with plain `?` placeholders (the `$search` condition), with its parameters. */
  embed(sql: string, params: readonly unknown[]): string {
    let next = 0;
    const text = sql.replace(/\?/g, () => {
      if (next >= params.length) throw new Error('more placeholders than parameters');
      return this.param(params[next++]);
    });
    if (next !== params.length) throw new Error('more parameters than placeholders');
    return text;
  }

  alias(): string {
    this.aliasCount += 1;
    return `t${this.aliasCount}`;
  }

  /** A statement for knex: every marker in `text` becomes `?`, its value bound in text order. */
  statement(text: string): { sql: string; params: unknown[] } {
    // Split on the marks: text, index, text, index, …, text.
    const parts = text.split(MARK);
    const params: unknown[] = [];
    let sql = parts[0]!;
    for (let i = 1; i < parts.length; i += 2) {
      params.push(this.values[Number(parts[i])]);
      sql += `?${parts[i + 1]}`;
    }
    return { sql, params };
  }
}

/** Never part of SQL text otherwise (client text is never spliced in). */
const MARK = '\u0000';
