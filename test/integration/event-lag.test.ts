import test from 'ava';
import pg from 'pg';
import { startStack, type Stack } from '../support/stack';
import { create } from '../support/writes';
import { eventually } from '../support/queues';
import { eventLatency, schemeMark } from '../../bench/event-latency';

// What the benchmark's event latency is read from (bench/event-latency.ts): each activity entry
// records when it was written, and the measure finds every Scheme a run created in search and in
// the activity log, from the database alone. No timings are asserted here (they belong to the bench).

let stack: Stack;
let db: pg.Pool;
test.before(async () => {
  stack = await startStack();
  db = new pg.Pool({ connectionString: stack.directDatabaseUrl, max: 2 });
});
test.after.always(async () => {
  await db?.end();
  await stack?.close();
});

test.serial('an activity entry records when it was written: after its command, by the database clock', async (t) => {
  const id = await create(stack, 'Schemes', { SchemeName: 'Lagoon Quay' });
  const row = await eventually(
    async () =>
      (await stack.knex('activities').where({ entity_id: id }).first<{ recorded_at: Date | null } | undefined>()) ??
      false,
  );
  const scheme = await stack.knex('schemes').where({ encoded_id: id }).first<{ created_at: Date }>();
  t.true(row.recorded_at instanceof Date);
  t.true(row.recorded_at!.getTime() >= scheme.created_at.getTime());
});

test.serial('the bench finds each Scheme of a run in search and the activity log', async (t) => {
  const from = await schemeMark(db);
  for (const name of ['Osprey Wharf', 'Kestrel Yard', 'Heron Court'])
    await create(stack, 'Schemes', { SchemeName: name });
  const to = await schemeMark(db);
  const latency = await eventLatency(db, from, to, 20_000);
  t.is(latency.schemes, 3);
  t.is(latency.search.missing, 0);
  t.is(latency.activities.missing, 0);
  for (const lag of [latency.search, latency.activities]) {
    t.true(lag.p50! >= 0 && lag.p50! <= lag.p99! && lag.p99! <= lag.max!);
  }
});
