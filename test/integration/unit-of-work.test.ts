import { randomUUID } from 'node:crypto';
import test from 'ava';
import type { Knex } from 'knex';
import { conflict, validationFailed, type Failure } from '../../domain/errors/domain-error';
import type { DomainEvent } from '../../domain/events/domain-event';
import { IDEMPOTENCY_KEY_REUSED } from '../../domain/writes/command-ids';
import type { LoggedCommand } from '../../db/commands/command-log';
import { createLogger } from '../../infra/logger';
import {
  MAX_TRANSACTION_ATTEMPTS,
  createUnitOfWork,
  type Called,
  type HandlerCall,
  type UnitOfWork,
} from '../../workers/commands/unit-of-work';
import { databasePerFile } from '../support/database-per-file';

/**
 * The exactly-once unit of work (workers/commands/unit-of-work.ts) that lone commands, `$batch`
 * atomicity groups and subscription commands share, on a database of its own: its handler calls
 * insert countries, so what it applied, rolled back or recorded is read back from Postgres.
 */

/** Each test runs on plain connections and on the command worker's pipelined ones (db/pipelined-pg.ts). */
const databases = { plain: databasePerFile(4), pipelined: databasePerFile(4, { pipelined: true }) };
const logger = createLogger('test', 'silent');

type Result = { ok: true; names: string[] } | { ok: false; failedCall: number; failure: Failure };

function recordOf(requestHash?: string): LoggedCommand {
  return {
    commandId: randomUUID(),
    name: 'test',
    entity: 'Country',
    subject: 'tester',
    ...(requestHash ? { requestHash } : {}),
  };
}

function eventOf(record: LoggedCommand, name: string, dbId: number): DomainEvent {
  return {
    eventId: randomUUID(),
    name: 'CountryCreated',
    entityType: 'Country',
    entityId: name,
    dbId,
    changedFields: ['Name'],
    subject: record.subject,
    commandId: record.commandId,
    occurredAt: new Date().toISOString(),
    version: 1,
    references: {},
  };
}

/** A handler call inserting a country, counting how often it ran. */
function insertCountry(record: LoggedCommand, name: string, runs: { n: number }): HandlerCall<string> {
  return async (trx: Knex.Transaction): Promise<Called<string>> => {
    runs.n++;
    const [row] = (await trx('countries').insert({ name, iso_code: randomUUID() }).returning('id')) as { id: number }[];
    return { value: name, events: [eventOf(record, name, row!.id)] };
  };
}

function unitOf(record: LoggedCommand, calls: () => HandlerCall<string>[]): UnitOfWork<string, Result> {
  return {
    record,
    calls,
    succeeded: (names) => ({ ok: true, names }),
    failed: (failure, failedCall) => ({ ok: false, failedCall, failure }),
  };
}

for (const [kind, db] of Object.entries(databases)) {
  function runner() {
    const committed: DomainEvent[][] = [];
    const runUnit = createUnitOfWork({ knex: db.knex, onCommitted: (events) => committed.push(events) });
    return { runUnit, committed };
  }

  const countries = async (...names: string[]) =>
    Number(((await db.knex('countries').whereIn('name', names).count({ n: '*' }).first()) as { n: string }).n);

  const logRows = (commandId: string) =>
    db.knex('command_log').where('command_id', commandId).select('result') as Promise<{ result: unknown }[]>;

  const outboxRows = async (commandId: string) =>
    Number(
      (
        (await db.knex('outbox').whereRaw("event->>'commandId' = ?", [commandId]).count({ n: '*' }).first()) as {
          n: string;
        }
      ).n,
    );

  const serializationFailure = () => Object.assign(new Error('could not serialize access'), { code: '40001' });

  test(`${kind}: a unit applies its calls in one transaction: one command_log record, its events in the outbox`, async (t) => {
    const { runUnit, committed } = runner();
    const record = recordOf();
    const runs = { n: 0 };
    const outcome = await runUnit(
      unitOf(record, () => [insertCountry(record, 'UA', runs), insertCountry(record, 'UB', runs)]),
      { logger },
    );
    t.deepEqual(outcome, { result: { ok: true, names: ['UA', 'UB'] }, values: ['UA', 'UB'] });
    t.is(await countries('UA', 'UB'), 2);
    t.deepEqual(await logRows(record.commandId), [{ result: { ok: true, names: ['UA', 'UB'] } }]);
    t.is(await outboxRows(record.commandId), 2);
    t.deepEqual(
      committed.map((events) => events.map((e) => e.entityId)),
      [['UA', 'UB']],
    );
  });

  test(`${kind}: a recorded unit delivered again answers the recorded result and applies nothing`, async (t) => {
    const { runUnit, committed } = runner();
    const record = recordOf();
    const runs = { n: 0 };
    const unit = unitOf(record, () => [insertCountry(record, 'RA', runs)]);
    const first = await runUnit(unit, { logger });
    // As a first delivery: its calls run, its record finds the id taken, and all of it rolls back.
    const again = await runUnit(unit, { logger });
    t.is(runs.n, 2);
    // As a redelivery: the log answers before any call runs.
    const redelivered = await runUnit(unit, { redelivered: true, logger });
    t.is(runs.n, 2);
    for (const replay of [again, redelivered]) t.deepEqual(replay, { result: first.result });
    t.is(await countries('RA'), 1);
    t.is(await outboxRows(record.commandId), 1);
    t.is(committed.length, 1, 'events handed on once');
  });

  test(`${kind}: two deliveries at once: one applies, the other waits on the record and answers it`, async (t) => {
    const { runUnit, committed } = runner();
    const record = recordOf();
    const runs = { n: 0 };
    const deliveries = ['CA', 'CB'];
    const unit = (name: string) => unitOf(record, () => [insertCountry(record, name, runs)]);
    const [a, b] = await Promise.all(deliveries.map((name) => runUnit(unit(name), { logger })));
    t.is(runs.n, 2, 'both applied their call');
    t.deepEqual(a!.result, b!.result);
    t.is([a, b].filter((outcome) => outcome!.values).length, 1, 'one committed, the other replayed');
    t.is(await countries(...deliveries), 1);
    t.is(committed.length, 1);
  });

  test(`${kind}: a client failure of the second call rolls back the first and is recorded once, naming the call`, async (t) => {
    const { runUnit, committed } = runner();
    const record = recordOf();
    const runs = { n: 0 };
    const unit = unitOf(record, () => [
      insertCountry(record, 'FA', runs),
      async () => {
        runs.n++;
        // A message quoting what the client sent, NUL and all: the record must still be storable.
        throw validationFailed(['Country.Name: "F\u0000B" is not a name']);
      },
    ]);
    const failed = await runUnit(unit, { logger });
    const expected: Result = {
      ok: false,
      failedCall: 1,
      failure: { kind: 'Validation', errors: ['Country.Name: "F\ufffdB" is not a name'] },
    };
    t.deepEqual(failed, { result: expected });
    t.is(runs.n, 2, 'a client failure is not retried');
    t.is(await countries('FA'), 0);
    t.deepEqual(await logRows(record.commandId), [{ result: expected }]);
    t.is(await outboxRows(record.commandId), 0);
    t.is(committed.length, 0);
    // Delivered again, it answers the recorded failure (without a call when redelivered).
    t.deepEqual(await runUnit(unit, { logger }), { result: expected });
    t.deepEqual(await runUnit(unit, { redelivered: true, logger }), { result: expected });
    t.is(runs.n, 4);
    t.is((await logRows(record.commandId)).length, 1);
  });

  test(`${kind}: a database error the unit translates is the client failure of the call that met it`, async (t) => {
    const { runUnit } = runner();
    await db.knex('countries').insert({ name: 'Taken', iso_code: 'TK' });
    const record = recordOf();
    const unit: UnitOfWork<string, Result> = {
      ...unitOf(record, () => [
        async (trx) => {
          await trx('countries').insert({ name: 'Taken again', iso_code: 'TK' });
          return { value: 'TK', events: [] };
        },
      ]),
      translate: (err) => ((err as { code?: string }).code === '23505' ? conflict(['Country.IsoCode: taken']) : null),
    };
    const outcome = await runUnit(unit, { logger });
    t.deepEqual(outcome.result, {
      ok: false,
      failedCall: 0,
      failure: { kind: 'Conflict', errors: ['Country.IsoCode: taken'] },
    });
    t.is((await logRows(record.commandId)).length, 1);
    // Untranslated, the same error is the infrastructure's: thrown for the job to retry, nothing recorded.
    const plain = recordOf();
    await t.throwsAsync(
      runUnit(
        unitOf(plain, () => [
          async (trx) => {
            await trx('countries').insert({ name: 'Taken again', iso_code: 'TK' });
            return { value: 'TK', events: [] };
          },
        ]),
        { logger },
      ),
      { message: /countries_iso_code_unique/ },
    );
    t.is((await logRows(plain.commandId)).length, 0);
  });

  test(`${kind}: a serialization failure runs the transaction again, at most ${MAX_TRANSACTION_ATTEMPTS} times`, async (t) => {
    const { runUnit } = runner();
    const record = recordOf();
    let attempts = 0;
    const runs = { n: 0 };
    const succeeding = await runUnit(
      unitOf(record, () => [
        insertCountry(record, 'SA', runs),
        async () => {
          if (++attempts < MAX_TRANSACTION_ATTEMPTS) throw serializationFailure();
          return { value: 'last', events: [] };
        },
      ]),
      { logger },
    );
    t.deepEqual(succeeding.result, { ok: true, names: ['SA', 'last'] });
    t.is(runs.n, MAX_TRANSACTION_ATTEMPTS);
    t.is(await countries('SA'), 1, 'the rolled-back attempts left nothing');

    const failing = recordOf();
    let tries = 0;
    await t.throwsAsync(
      runUnit(
        unitOf(failing, () => [
          async () => {
            tries++;
            throw serializationFailure();
          },
        ]),
        { logger },
      ),
      { message: 'could not serialize access' },
    );
    t.is(tries, MAX_TRANSACTION_ATTEMPTS);
    t.is((await logRows(failing.commandId)).length, 0, 'an infrastructure error is not recorded');
  });

  test(`${kind}: a failing shortcut falls back to the calls, and its attempt is not counted`, async (t) => {
    const { runUnit } = runner();
    const record = recordOf();
    const runs = { n: 0 };
    let attempts = 0;
    let shortcuts = 0;
    const outcome = await runUnit(
      {
        ...unitOf(record, () => [
          insertCountry(record, 'SH', runs),
          async () => {
            if (++attempts < MAX_TRANSACTION_ATTEMPTS) throw serializationFailure();
            return { value: 'last', events: [] };
          },
        ]),
        shortcut: async (trx) => {
          shortcuts++;
          await trx('countries').insert({ name: 'Shortcut', iso_code: 'SC' });
          throw new Error('set-based insert refused');
        },
      },
      { logger },
    );
    t.deepEqual(outcome.result, { ok: true, names: ['SH', 'last'] });
    t.is(shortcuts, 1);
    t.is(await countries('Shortcut'), 0);
  });

  test(`${kind}: an Idempotency-Key reused for another request is a conflict, and nothing is applied`, async (t) => {
    const { runUnit } = runner();
    const record = recordOf('hash-of-the-first-request');
    const runs = { n: 0 };
    await runUnit(
      unitOf(record, () => [insertCountry(record, 'IA', runs)]),
      { logger },
    );
    const other = { ...record, requestHash: 'hash-of-another-request' };
    const outcome = await runUnit(
      unitOf(other, () => [insertCountry(other, 'IB', runs)]),
      { logger },
    );
    t.deepEqual(outcome, { result: { ok: false, failure: { kind: 'Conflict', errors: [IDEMPOTENCY_KEY_REUSED] } } });
    t.is(runs.n, 1, 'a request hash means a repeat is expected: the log is read first');
    t.is(await countries('IB'), 0);
  });
}
