import test from 'ava';
import fc from 'fast-check';
import { nextPageAddress } from '../../domain/queries/next-page-link';
import { parseReadOptions } from '../../domain/queries/read-options';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';
import { encodeId } from '../../domain/ids/id-codec';

const limits = DEFAULT_READ_LIMITS;

/** The query of a next page's address as the `simple` parser would give it to the next read. */
function queryOf(target: string): Record<string, string> {
  return Object.fromEntries(new URL(target, 'http://x').searchParams);
}

function linkFor(query: Record<string, string>, lastKey: number): string | undefined {
  return nextPageAddress({
    route: 'Companies',
    query,
    options: parseReadOptions(query, limits),
    lastId: encodeId('Company', lastKey),
    limits,
  });
}

const condition = fc.constantFrom(
  "Name ne 'A'",
  "startswith(Name, 'B')",
  'Id gt 5',
  "Id gt 'AAAAAA'",
  "Name eq 'x' or Name eq 'y'",
  "not (Name eq 'z')",
);
const filterText = fc
  .array(fc.tuple(condition, fc.constantFrom(' and ', ' or '), fc.boolean()), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.map(([c, op, paren], i) => `${i ? op : ''}${paren ? `(${c})` : c}`).join(''));

test('a link always names a read that passes the limits, and following links never grows the filter', (t) => {
  fc.assert(
    fc.property(
      filterText,
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 1, max: 1_000_000 }),
      (filter, top, key) => {
        let query: Record<string, string> = { $filter: filter, $top: String(top) };
        let previous: string | undefined;
        for (let page = 0; page < 3; page++) {
          const link = linkFor(query, key + page);
          if (link === undefined) return;
          query = queryOf(link);
          parseReadOptions(query, limits); // would throw a 400
          if (previous !== undefined) t.is(query.$filter!.length, previous.length);
          t.true(query.$filter!.endsWith(`Id gt '${encodeId('Company', key + page)}'`));
          previous = query.$filter;
        }
      },
    ),
  );
});

test('arbitrary other parameters pass through unchanged and never break the link', (t) => {
  fc.assert(
    fc.property(
      fc.dictionary(
        fc.string().filter((k) => !k.startsWith('$')),
        fc.string(),
      ),
      (extra) => {
        const link = linkFor({ ...extra, $top: '2' }, 42);
        t.truthy(link);
        const query = queryOf(link!);
        for (const [name, value] of Object.entries(extra)) t.is(query[name], value);
      },
    ),
  );
});
