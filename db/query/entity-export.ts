import type { Readable } from 'node:stream';
import type { Knex } from 'knex';
import type { Client } from 'pg';
import QueryStream from 'pg-query-stream';
import type { EntityDefinition } from '../../domain/entities';
import { encodedIdFastSql, isoTimestampSql } from '../sql/encoded-id.sql';
import { aggregatedItemsSql, documentTextSql } from './document-text.sql';
import { rootRowsSql, type Statement } from './entity-reader';
import type { ReadPlan } from './read-plan';
import { rowIdSql } from './representation.sql';
import { SqlBuilder } from './sql-builder';
import { exemptFromReadTimeout } from './read-timeout';

/**
 * Exports (`/Export/<Entities>`): every row a list read would select, in the same order, with no
 * page cut, read through a cursor so memory stays flat whatever the row count.
 */

export type ExportFormat = 'csv' | 'ndjson';

interface ExportColumn {
  name: string;
  sql: string;
}

/**
 * CSV columns, derived from the definition (DESIGN §10): `Id`, the scalar fields in definition
 * order, then each single relation as `<Relation>Id` holding the related row's encoded Id.
 */
function exportColumns(entity: EntityDefinition): ExportColumn[] {
  const columns: ExportColumn[] = [{ name: 'Id', sql: rowIdSql({ kind: 'entity', def: entity }, 'r') }];
  for (const [name, field] of Object.entries(entity.fields)) {
    const col = `r.${field.column}`;
    columns.push({ name, sql: field.kind === 'datetime' ? isoTimestampSql(col) : col });
  }
  for (const [name, relation] of Object.entries(entity.relations)) {
    columns.push({ name: `${name}Id`, sql: encodedIdFastSql(relation.target, `r.${relation.column}`) });
  }
  return columns;
}

export function exportHeader(entity: EntityDefinition): string[] {
  return exportColumns(entity).map((c) => c.name);
}

/** NDJSON lines carry the owned collections too, besides the always-populated ones. */
function shownCollections(entity: EntityDefinition): string[] {
  return Object.entries(entity.collections)
    .filter(([, collection]) => collection.owned || collection.alwaysPopulated)
    .map(([name]) => name);
}

/**
 * One row per exported entity: CSV rows are arrays in `exportHeader` order; NDJSON rows are one
 * JSON document each, in the full (keyed) form so geometries are included, built as text
 * (document-text.sql.ts: the bytes of the keyed read with the owned collections expanded).
 */
export function exportSql(plan: ReadPlan, format: ExportFormat): Statement {
  const { entity, source } = plan;
  const builder = new SqlBuilder();
  if (format === 'csv') {
    const select = exportColumns(entity)
      .map((c) => c.sql)
      .join(', ');
    return builder.statement(`select ${select} ${rootRowsSql(plan, builder)}`);
  }
  const shown = shownCollections(entity);
  if (isWholeTableInKeyOrder(plan)) {
    // Every row: collections aggregated in one pass each and merge-joined instead of one
    // correlated lookup per row and collection (as JSON, Postgres time for 100k seeded schemes
    // 4.1 → 3.3 s, for 248k mostly childless ones 5.9 → 4.0 s).
    const { joins, values } = aggregatedItemsSql(source, 'r', shown, builder);
    const doc = documentTextSql(source, 'r', builder, shown, values);
    return builder.statement(`select ${doc} from ${entity.table} r ${joins.join(' ')} order by r.id`);
  }
  const doc = documentTextSql(source, 'r', builder, shown);
  return builder.statement(`select ${doc} ${rootRowsSql(plan, builder)}`);
}

/** An export of every row in key order: no filter, no search, no ordering of its own. */
function isWholeTableInKeyOrder(plan: ReadPlan): boolean {
  return !plan.filter && !plan.search && plan.ordering.byDefault;
}

/** Rows fetched per round trip: large enough for throughput, small enough to bound memory. */
const CURSOR_BATCH_ROWS = 500;

/**
 * Opens the export's cursor on a connection taken from the pool and held until the stream closes,
 * whether it ended, failed or was destroyed because the client went away (closing the stream
 * closes the portal first). Resolves once the first rows (or the end) are ready, so a failing
 * statement rejects here, before any response has started. Rows are arrays (`rowMode: 'array'`).
 */
export async function openExportStream(knex: Knex, plan: ReadPlan, format: ExportFormat): Promise<Readable> {
  const { sql, params } = exportSql(plan, format);
  const native = knex
    .raw(sql, params as Knex.RawBinding[])
    .toSQL()
    .toNative();
  const connection = (await knex.client.acquireConnection()) as Client;
  const rows = new QueryStream(native.sql, native.bindings as unknown[], {
    batchSize: CURSOR_BATCH_ROWS,
    rowMode: 'array',
  });
  rows.once('close', () => knex.client.releaseConnection(connection));
  try {
    const exempt = exemptFromReadTimeout(connection);
    if (exempt) await connection.query(exempt);
    connection.query(rows);
    await firstRowsOrEnd(rows);
  } catch (err) {
    rows.on('error', () => undefined); // already reported through `err`; closing may add another
    rows.destroy();
    throw err;
  }
  return rows;
}

function firstRowsOrEnd(stream: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const onReadable = () => {
      stream.off('error', onError);
      resolve();
    };
    const onError = (err: Error) => {
      stream.off('readable', onReadable);
      reject(err);
    };
    stream.once('readable', onReadable);
    stream.once('error', onError);
  });
}
