import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { keyedStatement, positional } from './scenarios';
import { PATCHABLE, type Patchable } from './queue-floor-contract';
import type { DomainEvent } from '../domain/events/domain-event';

/**
 * The third write floor (issue 28): what the design card cannot do without, in hand-written form.
 * It runs inside bench/queue-floor-worker.ts, so a write still crosses the queue (HTTP → BullMQ →
 * a worker in another process → the reply on the command-replies channel), and there it applies
 * the change in one transaction with only the statements the design requires of a command: for a
 * PATCH the row lock and the document the patch applies to, the update, and the command_log row
 * with the outbox row in the same transaction; for a POST the insert, the command_log row and the
 * outbox row. Synchronous commit, as the service. Each transaction takes two waits on Postgres
 * (pg's pipeline mode: BEGIN goes out with the first statements, the record with the COMMIT).
 *
 * Left out, so this stays a floor: the framework, validation, the signature, admission, knex and
 * Objection, the events' delivery (its outbox rows are written already published, so the
 * service's relay skips them) and the view and notification work that follows. The complete design
 * floor (DESIGN_FLOOR_FULL=1, bench/queue-floor-contract.ts) puts admission and the events' delivery
 * and handling back: given an event sink, the outbox row is written unpublished and the sink gets the
 * event after commit.
 */

/** The command's record: its outbox row (written published, or left for the event sink) and its command_log row. */
const recordOf = (
  publishedAt: 'now()' | 'null',
) => `with outboxed as (insert into outbox (event_id, event, origin, published_at) values ($1, $2, $3, ${publishedAt}))
  insert into command_log (command_id, name, entity, subject, request_hash, result) values ($4, $5, 'Scheme', 'bench-floor', null, $6)`;
const RECORD = recordOf('now()');
const RECORD_UNPUBLISHED = recordOf('null');

/**
 * Where the events of the complete design floor go after commit (the service's OutboxPublisher, in
 * bench/queue-floor-worker.ts); without it the outbox rows are written already published.
 */
export type FloorEventSink = (event: DomainEvent) => void;

export type DesignFloorJob =
  { kind: 'post'; name: string } | { kind: 'patch'; id: number; field: Patchable; value: string | number };

export interface DesignFloorResult {
  ok: boolean;
  entity: 'Scheme';
  dbId: number;
  encodedId: string;
  version: number;
}

/** A pool whose connections pipeline, as the command worker's do (db/pipelined-pg.ts). */
export function designFloorPool(connectionString: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString, max, pipeline: true, application_name: 'design floor' } as pg.PoolConfig);
}

/** Applies one job in one transaction; returns the command's result. */
export async function applyDesignFloorJob(
  pool: pg.Pool,
  job: DesignFloorJob,
  events?: FloorEventSink,
): Promise<DesignFloorResult> {
  const client = await pool.connect();
  try {
    const result =
      job.kind === 'patch'
        ? await patch(client, job.id, job.field, job.value, events)
        : await post(client, job.name, events);
    client.release();
    return result;
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
}

async function patch(
  client: pg.PoolClient,
  id: number,
  field: Patchable,
  value: string | number,
  events: FloorEventSink | undefined,
): Promise<DesignFloorResult> {
  const begun = client.query('BEGIN');
  const locked = client.query<{ version: number }>({
    name: 'design_lock',
    text: 'select id, version from schemes where id = $1 for no key update',
    values: [id],
  });
  const read = client.query<{ json: string }>(positional('design_document', keyedStatement(id)));
  await begun;
  const [lock, doc] = await Promise.all([locked, read]);
  const row = lock.rows[0];
  if (!row || !doc.rows[0]) {
    await client.query('ROLLBACK');
    throw new Error(`scheme ${id} not found`);
  }
  // The change applied to the document, as a JSON Patch is.
  const document = JSON.parse(doc.rows[0].json) as { Id: string } & Record<string, unknown>;
  document[field] = value;
  const update = client.query({
    name: `design_update_${field}`,
    text: `update schemes set ${PATCHABLE[field]} = $1 where id = $2`,
    values: [value, id],
  });
  const result: DesignFloorResult = {
    ok: true,
    entity: 'Scheme',
    dbId: id,
    encodedId: document.Id,
    version: row.version + 1,
  };
  await record(client, update, 'patch', result, [field], events);
  return result;
}

async function post(
  client: pg.PoolClient,
  name: string,
  events: FloorEventSink | undefined,
): Promise<DesignFloorResult> {
  const begun = client.query('BEGIN');
  const inserted = client.query<{ id: number; encoded_id: string; version: number }>({
    name: 'design_insert',
    text: 'insert into schemes (scheme_name) values ($1) returning id, encoded_id, version',
    values: [name],
  });
  await begun;
  const row = (await inserted).rows[0]!;
  const result: DesignFloorResult = {
    ok: true,
    entity: 'Scheme',
    dbId: row.id,
    encodedId: row.encoded_id,
    version: row.version,
  };
  await record(client, Promise.resolve(), 'create', result, ['SchemeName'], events);
  return result;
}

/** The command's record and its event, sent with the COMMIT behind `pending` (one wait for all three). */
async function record(
  client: pg.PoolClient,
  pending: Promise<unknown>,
  command: string,
  result: DesignFloorResult,
  changedFields: string[],
  events: FloorEventSink | undefined,
): Promise<void> {
  const commandId = randomUUID();
  const eventId = randomUUID();
  const event: DomainEvent = {
    dbId: result.dbId,
    name: command === 'patch' ? 'SchemeUpdated' : 'SchemeCreated',
    eventId,
    subject: 'bench-floor',
    version: result.version,
    entityId: result.encodedId,
    commandId,
    entityType: 'Scheme',
    occurredAt: new Date().toISOString(),
    changedFields,
    references: {},
  };
  const recorded = client.query({
    name: events ? 'design_record_unpublished' : 'design_record',
    text: events ? RECORD_UNPUBLISHED : RECORD,
    values: [
      eventId,
      JSON.stringify(event),
      JSON.stringify({ requestId: commandId }),
      commandId,
      command,
      JSON.stringify(result),
    ],
  });
  const committed = client.query('COMMIT');
  await Promise.all([pending, recorded, committed]);
  events?.(event);
}
