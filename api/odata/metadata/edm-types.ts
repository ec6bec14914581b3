import type { ScalarField, ScalarKind } from '../../../domain/entities';

/**
 * The Edm type of each field kind, as its column holds it (test/integration/schema-drift.test.ts
 * pins kind → column: text, integer, double precision, date, timestamptz, jsonb).
 */
const EDM_TYPE: Record<ScalarKind, string> = {
  string: 'Edm.String',
  url: 'Edm.String',
  // Text the API checks as WKT: Edm.Geometry would be GeoJSON in the OData JSON format.
  wkt: 'Edm.String',
  integer: 'Edm.Int32',
  number: 'Edm.Double',
  date: 'Edm.Date',
  datetime: 'Edm.DateTimeOffset',
  // A JSON array of strings (read models): a collection of strings.
  stringList: 'Edm.String',
};

/** Reads show timestamps with milliseconds (db/sql/encoded-id.sql.ts `isoTimestampSql`). */
const TIMESTAMP_PRECISION = 3;

/** The CSDL JSON facets of a field: `$Type` (left out for Edm.String), `$MaxLength`, `$Precision`, `$Collection`. */
export function edmFacetsOf(field: ScalarField): Record<string, unknown> {
  const type = EDM_TYPE[field.kind];
  return {
    ...(field.kind === 'stringList' ? { $Collection: true } : {}),
    ...(type === 'Edm.String' ? {} : { $Type: type }),
    ...(field.maxLength !== undefined ? { $MaxLength: field.maxLength } : {}),
    ...(field.kind === 'datetime' ? { $Precision: TIMESTAMP_PRECISION } : {}),
  };
}
