import test from 'ava';
import { measureCommandCpu } from '../../bench/command-cpu';
import { generateData } from '../../db/seeds/generated-data.seed';
import { databasePerFile } from '../support/database-per-file';

/**
 * The benchmark's in-process command CPU figures (bench/command-cpu.ts) compare the service's
 * command runner with the design floor only if both really apply their PATCHes: each op of both
 * renames the first Scheme and records its command with its event, and every variant is reported.
 */

const db = databasePerFile(2);

test('both PATCH variants apply and record every write; every variant reports its rounds', async (t) => {
  await generateData(db.knex, { schemes: 5, seed: 7 });
  const counts = async () =>
    (
      await db.knex.raw<{ rows: { commands: number; outbox: number }[] }>(
        'select (select count(*)::int from command_log) as commands, (select count(*)::int from outbox) as outbox',
      )
    ).rows[0]!;
  const before = await counts();
  const figures = await measureCommandCpu({ databaseUrl: db.current.url, rounds: 2, ops: 3, warmup: 1 });
  t.deepEqual(
    figures.map((f) => f.variant),
    [
      'design floor: PATCH transaction',
      'service: command runner, PATCH',
      'empty Objection transaction',
      'empty pg transaction',
    ],
  );
  for (const f of figures) {
    t.is(f.rounds.length, 2, f.variant);
    t.true(f.cpuMicros > 0 && f.wallMicros > 0, f.variant);
  }
  // Two PATCH variants × (1 warm-up + 2 rounds × 3) writes, each with its command and its event.
  t.deepEqual(await counts(), { commands: before.commands + 14, outbox: before.outbox + 14 });
  const first = await db.knex('schemes').orderBy('id').first('scheme_name');
  // The last write of the last round: the runner's op 1 + 1 × 3 + 2 (the runner runs after the floor).
  t.is(first.scheme_name, 'Command CPU 6');
});
