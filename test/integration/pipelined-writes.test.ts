import type { Socket } from 'node:net';
import test from 'ava';
import type { Knex } from 'knex';
import type pg from 'pg';
import { connectionOf, sendStatement } from '../../db/query/prepared-statements';
import { TurnCorkedClient } from '../../db/pipelined-pg';
import { databasePerFile } from '../support/database-per-file';

/**
 * The command worker's connections send what one turn of the event loop gives them in one write
 * (db/pipelined-pg.ts): a transaction's BEGIN with its first statements, its record with its
 * COMMIT. Counted at the socket (its `_write` / `_writev`, one per chunk handed to the kernel).
 */

const db = databasePerFile(1, { pipelined: true });

/** Counts the chunks `socket` writes while `run` runs. */
async function writesDuring(socket: Socket, run: () => Promise<unknown>): Promise<number> {
  const counted = socket as Socket & { _write: (...args: unknown[]) => void; _writev?: (...args: unknown[]) => void };
  const [write, writev] = [counted._write, counted._writev];
  let writes = 0;
  counted._write = (...args) => {
    writes++;
    return write.apply(socket, args);
  };
  if (writev)
    counted._writev = (...args) => {
      writes++;
      return writev.apply(socket, args);
    };
  try {
    await run();
  } finally {
    counted._write = write;
    if (writev) counted._writev = writev;
  }
  return writes;
}

async function socketOf(knex: Knex): Promise<Socket> {
  return knex.transaction(async (trx) => {
    const client = (await connectionOf(trx)) as unknown as { connection: { stream: Socket } };
    return client.connection.stream;
  });
}

test.serial('a transaction: BEGIN with its first statement, the last statement with COMMIT', async (t) => {
  const socket = await socketOf(db.knex);
  const writes = await writesDuring(socket, () =>
    db.knex.transaction(async (trx) => {
      const [row] = ((await trx.raw('select 1 as one')) as { rows: { one: number }[] }).rows;
      t.is(row?.one, 1);
      // As the command's record goes: handed over, then COMMIT without waiting for its answer.
      const sent = await sendStatement(await connectionOf(trx), 'select ?::int as two', [2]);
      void sent.answer.catch(() => undefined);
    }),
  );
  t.is(writes, 2, 'BEGIN + select, then the last statement + COMMIT (4 with a write per statement)');
});

test.serial('statements given in one turn leave in one write; the next turn writes again', async (t) => {
  const client = new TurnCorkedClient(db.current.url);
  await client.connect();
  t.teardown(() => client.end());
  const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
  const writes = await writesDuring(socket, async () => {
    const answers = [1, 2, 3].map((n) => client.query('select $1::int as n', [n]) as Promise<pg.QueryResult>);
    t.deepEqual(
      (await Promise.all(answers)).map((r) => (r.rows[0] as { n: number }).n),
      [1, 2, 3],
    );
    await client.query('select 4');
  });
  t.is(writes, 2);
});

test.serial('a failed statement in a corked turn fails alone; the connection goes on', async (t) => {
  const client = new TurnCorkedClient(db.current.url);
  await client.connect();
  t.teardown(() => client.end());
  const [bad, good] = await Promise.allSettled([client.query('select 1/0'), client.query('select 2 as two')]);
  t.is(bad.status, 'rejected');
  t.like(good, { status: 'fulfilled' });
  t.is(((await client.query('select 3 as three')) as pg.QueryResult<{ three: number }>).rows[0]!.three, 3);
});
