import { Transform } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { ExportFormat } from '../../db/query/entity-export';

export const MEDIA_TYPE: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
};

/** `Accept` values in order of preference; the first is the default (also for `*\/*`). */
export const OFFERED = ['text/csv', 'application/x-ndjson'] as const;

export function formatOfMediaType(mediaType: (typeof OFFERED)[number]): ExportFormat {
  return mediaType === 'text/csv' ? 'csv' : 'ndjson';
}

/**
 * Turns cursor rows (arrays) into bytes. CSV: RFC 4180 (CRLF records, fields quoted when they hold
 * a comma, quote or line break), a header row first; a null is an empty field; formulas escaped. NDJSON: each row's
 * single column is already a JSON document.
 */
export function rowFormatter(format: ExportFormat, header: string[]): Transform {
  if (format === 'csv') {
    // escape_formulas: a text cell starting with = + - @ tab or CR gets a leading ' so a spreadsheet
    // shows it instead of running it (CSV injection, DESIGN §13); numbers are left as they are.
    // quote_record_delimiter: with a record_delimiter given, csv-stringify quotes only fields holding
    // CRLF itself, so a bare LF or CR would end the record for a reader and start a new one with
    // whatever follows (a formula included); every field holding either is quoted instead.
    return stringify({
      header: true,
      columns: header,
      record_delimiter: 'windows',
      quote_record_delimiter: true,
      escape_formulas: true,
    });
  }
  return new Transform({
    writableObjectMode: true,
    transform(row: [string], _encoding, callback) {
      callback(null, `${row[0]}\n`);
    },
  });
}
