import test from 'ava';
import type pg from 'pg';
import { applyDesignFloorJob, designFloorPool } from '../../bench/design-floor-writes';
import { generateData } from '../../db/seeds/generated-data.seed';
import { encodeId } from '../../domain/ids/id-codec';
import { databasePerFile } from '../support/database-per-file';
import type { DomainEvent } from '../../domain/events/domain-event';

/**
 * The benchmark's design floor (bench/design-floor-writes.ts) is only the floor of what the
 * design allows if it does the writes the design requires: the change, its command_log row and
 * its outbox row in one transaction, or nothing at all. Checked on a small generated data set,
 * through the pipelined connections the floor uses.
 */

const db = databasePerFile(2);
let pool: pg.Pool | undefined;
test.after.always(() => pool?.end());

/** The data and the floor's pool, made by the first test (the database exists only once the hooks ran). */
async function floorPool(): Promise<pg.Pool> {
  if (!pool) {
    await generateData(db.knex, { schemes: 20, seed: 3 });
    pool = designFloorPool(db.current.url, 2);
  }
  return pool;
}

async function counts(): Promise<{ commands: number; outbox: number; unpublished: number }> {
  const pool = await floorPool();
  const { rows } = await pool.query<{ commands: number; outbox: number; unpublished: number }>(
    `select (select count(*)::int from command_log) as commands, (select count(*)::int from outbox) as outbox,
            (select count(*)::int from outbox where published_at is null) as unpublished`,
  );
  return rows[0]!;
}

test.serial('a PATCH changes the row, bumps its version and records the command with its event', async (t) => {
  const before = await counts();
  const pool = await floorPool();
  const { rows } = await pool.query<{ id: number; version: number }>(
    'select id, version from schemes order by id limit 1',
  );
  const { id, version } = rows[0]!;
  const result = await applyDesignFloorJob(pool, { kind: 'patch', id, field: 'TotalUnits', value: 4321 });
  t.deepEqual(result, {
    ok: true,
    entity: 'Scheme',
    dbId: id,
    encodedId: encodeId('Scheme', id),
    version: version + 1,
  });
  const after = await pool.query<{ total_units: number; version: number }>(
    'select total_units, version from schemes where id = $1',
    [id],
  );
  t.deepEqual(after.rows[0], { total_units: 4321, version: version + 1 });
  t.deepEqual(await counts(), {
    commands: before.commands + 1,
    outbox: before.outbox + 1,
    unpublished: before.unpublished,
  });
  const logged = await pool.query<{ result: unknown; event: { entityId: string; changedFields: string[] } }>(
    `select c.result, o.event from command_log c join outbox o on o.event->>'commandId' = c.command_id
     order by c.created_at desc limit 1`,
  );
  t.deepEqual(logged.rows[0]?.result, result);
  t.is(logged.rows[0]?.event.entityId, result.encodedId);
  t.deepEqual(logged.rows[0]?.event.changedFields, ['TotalUnits']);
});

test.serial('a PATCH of a scheme that does not exist fails and leaves nothing behind', async (t) => {
  const before = await counts();
  const pool = await floorPool();
  await t.throwsAsync(applyDesignFloorJob(pool, { kind: 'patch', id: 999_999, field: 'TotalUnits', value: 1 }), {
    message: /not found/,
  });
  t.deepEqual(await counts(), before);
  // The connection went back to the pool usable: the next job runs on it.
  const { rows } = await pool.query<{ id: number }>('select id from schemes order by id limit 1');
  await t.notThrowsAsync(
    applyDesignFloorJob(pool, { kind: 'patch', id: rows[0]!.id, field: 'SchemeName', value: 'Renamed' }),
  );
});

test.serial('a POST inserts the scheme and records the command with its event', async (t) => {
  const before = await counts();
  const pool = await floorPool();
  const result = await applyDesignFloorJob(pool, { kind: 'post', name: 'Design floor scheme' });
  const { rows } = await pool.query<{ scheme_name: string; encoded_id: string }>(
    'select scheme_name, encoded_id from schemes where id = $1',
    [result.dbId],
  );
  t.deepEqual(rows[0], { scheme_name: 'Design floor scheme', encoded_id: result.encodedId });
  t.deepEqual(await counts(), {
    commands: before.commands + 1,
    outbox: before.outbox + 1,
    unpublished: before.unpublished,
  });
});

test.serial(
  'the complete floor: given an event sink, the outbox row waits unpublished and the sink gets its event after commit',
  async (t) => {
    const before = await counts();
    const pool = await floorPool();
    const { rows } = await pool.query<{ id: number; version: number }>(
      'select id, version from schemes order by id limit 1',
    );
    const { id, version } = rows[0]!;
    const events: DomainEvent[] = [];
    let committedWhenSunk: number | undefined;
    const result = await applyDesignFloorJob(
      pool,
      { kind: 'patch', id, field: 'SchemeName', value: 'Sunk' },
      (event) => {
        events.push(event);
        committedWhenSunk = events.length;
      },
    );
    t.is(committedWhenSunk, 1);
    t.like(events[0], {
      name: 'SchemeUpdated',
      entityType: 'Scheme',
      dbId: id,
      entityId: result.encodedId,
      version: version + 1,
      changedFields: ['SchemeName'],
      references: {},
    });
    t.deepEqual(await counts(), {
      commands: before.commands + 1,
      outbox: before.outbox + 1,
      unpublished: before.unpublished + 1,
    });
    // The event the sink got is the outbox row the service's relay would publish.
    const outbox = await pool.query<{ event: DomainEvent }>('select event from outbox where event_id = $1', [
      events[0]!.eventId,
    ]);
    t.deepEqual(outbox.rows[0]?.event, events[0]);
  },
);
