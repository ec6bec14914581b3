import test from 'ava';
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { rowFormatter } from '../../api/export/export-format';
import { parseCsv } from '../support/csv';

/** The CSV formatter alone: RFC 4180 quoting and formula escaping over arbitrary cell text. */

const HEADER = ['Id', 'Name', 'Note'];
type Cell = string | number | null;

async function csvOf(rows: Cell[][]): Promise<string> {
  return text(Readable.from(rows).pipe(rowFormatter('csv', HEADER)));
}

/** What a spreadsheet may run as a formula (DESIGN §13; csv-stringify also escapes the full-width forms). */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** The text a reader must get back for a cell: the text itself, or it behind a `'` when it could act as a formula. */
function expectedCell(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return String(cell);
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

test('bare LF and CR are quoted: "a\\n=1+1" and "\\r=1+1" stay one record, one cell, no formula', async (t) => {
  const rows: Cell[][] = [
    ['1', 'a\n=1+1', 'x'],
    ['2', '\r=1+1', 'a\r=1+1'],
    ['3', '\n=1+1', '"quoted",\r\n=cmd'],
    ['4', '=1+1', '-2'],
  ];
  const csv = await csvOf(rows);
  t.true(csv.includes('"a\n=1+1"'), csv);
  t.true(csv.includes(`"'\r=1+1"`), csv);
  t.deepEqual(parseCsv(csv), [HEADER, ...rows.map((row) => row.map(expectedCell))]);
});

test('numbers are written as they are, negative ones included; null is an empty field', async (t) => {
  t.is(await csvOf([[-5, null, 1.5]]), 'Id,Name,Note\r\n-5,,1.5\r\n');
});

/** Text built mostly from the characters that matter to CSV and formulas, with any unicode besides. */
const cellText = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('"', ',', '\r', '\n', '\r\n', '=', '+', '-', '@', '\t', "'", ' ') },
    { weight: 1, arbitrary: fc.constantFrom('\uFF1D', '\uFF0B', '\uFF0D', '\uFF20', 'é', '😀', '\u2028') },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }) },
  ),
  maxLength: 12,
});
const cell: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 8, arbitrary: cellText },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
);
const rows = fc.array(fc.tuple(cell, cell, cell), { maxLength: 8 });

test('property: every exported row parses back to exactly the row written, escaped where it could be a formula', async (t) => {
  await fc.assert(
    fc.asyncProperty(rows, async (written) => {
      const records = parseCsv(await csvOf(written));
      t.is(records.length, written.length + 1);
      t.deepEqual(records, [HEADER, ...written.map((row) => row.map(expectedCell))]);
      // Said directly: a text cell reads back as its text or as '<text>, and never as a formula.
      written.forEach((row, r) =>
        row.forEach((value, c) => {
          if (typeof value !== 'string') return;
          const read = records[r + 1]![c]!;
          t.true(read === value || read === `'${value}`);
          t.false(FORMULA_START.test(read), JSON.stringify(read));
        }),
      );
    }),
    { numRuns: 2000 },
  );
});
