import test from 'ava';
import knexFactory, { type Knex } from 'knex';
import type pg from 'pg';
import { recordActivities } from '../../db/activities/activity-log';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { makeEvent } from '../support/queues';

/**
 * The activity log's insert runs without JIT compilation. Its planner estimate passes Postgres's
 * default `jit_above_cost` whatever the burst, and compiling it took ~20 ms of every burst's 21
 * (`npm run bench`, 2026-11-28). Postgres's own `auto_explain` reports each statement's plan to the
 * client here, with `jit_above_cost` at 0 so that any statement not exempted is compiled.
 */

let db: TestDatabase;
let knex: Knex;
/** The plans auto_explain reported on the one connection, in order. */
const plans: string[] = [];

test.before(async () => {
  db = await createTestDatabase();
  knex = knexFactory({
    client: 'pg',
    connection: db.url,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
        conn.on('notice', (notice) => plans.push(notice.message ?? ''));
        conn
          .query(
            `load 'auto_explain'; set auto_explain.log_min_duration = 0; set auto_explain.log_level = notice;
             set auto_explain.log_nested_statements = on; set jit_above_cost = 0`,
          )
          .then(
            () => done(null, conn),
            (err: Error) => done(err, conn),
          );
      },
    },
  });
});
test.after.always(async () => {
  await knex?.destroy();
  await db?.drop();
});

const planOf = (text: string) => plans.filter((plan) => plan.includes(text));

test.serial('the activity insert of a burst is planned and run without JIT compilation', async (t) => {
  const jit = (await knex.raw('select pg_jit_available() as available')) as { rows: { available: boolean }[] };
  const events = Array.from({ length: 17 }, (_, i) => makeEvent('Company', 'Updated', 1000 + i));
  plans.length = 0;
  t.is(await recordActivities(knex, events), 17);
  await recordActivities(knex, events.slice(0, 1), { earlierFirst: false });
  const inserts = planOf('insert into activities');
  t.is(inserts.length, 2, 'auto_explain reported both inserts (the walk and the plain one)');
  for (const plan of inserts) t.notRegex(plan, /JIT:/, plan);

  if (!jit.rows[0]!.available) return t.log('this Postgres has no JIT provider: the control below is moot');
  // The control: on this connection, a statement outside the activity log's transaction is compiled.
  plans.length = 0;
  await knex.raw('select count(*) from activities');
  t.regex(planOf('count(*) from activities').join('\n'), /JIT:/);
});
