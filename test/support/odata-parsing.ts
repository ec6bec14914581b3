import test from 'ava';
import fc from 'fast-check';
import { ODataSyntaxError } from '../../domain/odata';

/** Shared by the parser tests (test/unit/odata-*.test.ts). */

/** The AST without its spans, for shape comparisons. */
export function stripSpans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripSpans);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([key]) => key !== 'span');
    return Object.fromEntries(entries.map(([key, item]) => [key, stripSpans(item)]));
  }
  return value;
}

/** Query options of an odata-query result (`?$filter=...&$top=1`), URL-decoded. */
export function queryOptions(query: string): Record<string, string> {
  const options: Record<string, string> = {};
  for (const pair of query.replace(/^\?/, '').split('&')) {
    const equals = pair.indexOf('=');
    options[decodeURIComponent(pair.slice(0, equals))] = decodeURIComponent(pair.slice(equals + 1));
  }
  return options;
}

/** A macro asserting `parse(text)` fails with an ODataSyntaxError of `option` at `position`. */
export function rejectsMacro(option: string, parse: (text: string) => unknown) {
  return test.macro({
    exec(t, text: string, position: number, offending: string, message?: string) {
      const error = t.throws(() => parse(text), { instanceOf: ODataSyntaxError });
      t.is(error?.option, option);
      t.is(error?.position, position);
      t.is(error?.offending, offending);
      t.true(error?.message.startsWith(`${option}: `));
      t.true(error?.message.includes(`at position ${position}`));
      if (message !== undefined) t.is(error?.message, message);
    },
    title: (_provided, text: string) => `rejects ${JSON.stringify(text)}`,
  });
}

/** Whether `parse(text)` gives an AST or an ODataSyntaxError — never any other throw. */
export function onlySyntaxErrorsOf(parse: (text: string) => unknown): (text: string) => boolean {
  return (text) => {
    try {
      parse(text);
      return true;
    } catch (error) {
      return error instanceof ODataSyntaxError;
    }
  };
}

/** Fuzzes a parser with random strings and random joins of grammar fragments. */
export function fuzzParser(parse: (text: string) => unknown, fragments: readonly string[], runs = 3000): void {
  const ok = onlySyntaxErrorsOf(parse);
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), ok), { numRuns: runs });
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), (parts) => ok(parts.join(''))),
    { numRuns: runs },
  );
}
