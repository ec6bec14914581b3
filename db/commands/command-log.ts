import type { Knex } from 'knex';
import { connectionOf, sendStatement, statementsIn, type SentStatement } from '../query/prepared-statements';
import type { Command, CommandResult } from '../../domain/commands/command';
import type { LegacyRecordedBatch, RecordedBatch } from '../../domain/batch/batch-command';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { RetainedTable } from './retention';

/**
 * command_log: the exactly-once guarantee of the write side (DESIGN §11). A command writes its id
 * and result last thing in its transaction; a second delivery of the same id waits on that primary
 * key until the first commits or rolls back, then either finds the id taken (and rolls back its own
 * work) or records itself. Writing it last, with the outbox rows, costs one statement instead of a
 * claim at the start plus a result at the end.
 */

export interface CommandLogEntry<R = CommandResult> {
  commandId: string;
  name: string;
  entity: string;
  subject: string;
  requestHash: string | null;
  result: R | null;
}

/**
 * What the log records of a command: a command, or an atomicity group of a `$batch` (name `group`,
 * entity `$batch`, its result the result of each of its requests).
 */
export type LoggedCommand = Pick<Command, 'commandId' | 'subject' | 'requestHash' | 'origin'> & {
  name: string;
  entity: string;
};

interface CommandLogRow<R> {
  command_id: string;
  name: string;
  entity: string;
  subject: string;
  request_hash: string | null;
  result: R | null;
}

function entryOf<R>(row: CommandLogRow<R>): CommandLogEntry<R> {
  return {
    commandId: row.command_id,
    name: row.name,
    entity: row.entity,
    subject: row.subject,
    requestHash: row.request_hash,
    result: row.result,
  };
}

function rowOf(command: LoggedCommand, result: unknown) {
  return {
    command_id: command.commandId,
    name: command.name,
    entity: command.entity,
    subject: command.subject,
    request_hash: command.requestHash ?? null,
    result: result === null ? null : JSON.stringify(result),
  };
}

export async function findCommand<R = CommandResult>(
  knex: Knex | Knex.Transaction,
  commandId: string,
): Promise<CommandLogEntry<R> | null> {
  const row = (await knex('command_log').where('command_id', commandId).first()) as CommandLogRow<R> | undefined;
  return row ? entryOf(row) : null;
}

/**
 * Records a successful command and its events in one statement at the end of its transaction:
 * the outbox rows (each with the command's origin: its request id and trace context, for the
 * relay and the event workers) and the command_log row. Returns false when the id is logged already: an earlier
 * delivery committed first (a concurrent one is waited for on the primary key), and the caller must
 * roll back everything this delivery did and return the recorded result instead.
 */
export async function recordCommand(
  trx: Knex.Transaction,
  command: LoggedCommand,
  result: unknown,
  events: readonly DomainEvent[],
): Promise<boolean> {
  const [sql, bindings] = recordStatement(
    command,
    result,
    events,
    'on conflict (command_id) do nothing returning command_id',
  );
  const inserted = await (await statementsIn(trx)).raw<{ rows: unknown[] }>(sql, bindings);
  return inserted.rows.length > 0;
}

/**
 * recordCommand handed to the transaction's pipelined connection (db/pipelined-pg.ts) without
 * waiting for its answer, so the COMMIT issued next goes out with it: one round trip fewer per
 * command. An id recorded before is a unique violation here, not an empty answer: the transaction
 * is then failed, and Postgres answers the COMMIT behind it by rolling everything back. The answer
 * rejects, and isRecordedAlready tells that case from the others.
 */
export async function sendRecord(
  trx: Knex.Transaction,
  command: LoggedCommand,
  result: unknown,
  events: readonly DomainEvent[],
): Promise<SentStatement<{ command_id: string }>> {
  const [sql, bindings] = recordStatement(command, result, events, '');
  const sent = await sendStatement<{ command_id: string }>(await connectionOf(trx), sql, bindings);
  sent.answer.catch(() => undefined); // awaited by the caller once the transaction is over
  return sent;
}

/** The error of sendRecord when an earlier delivery of the same command recorded it first. */
export function isRecordedAlready(err: unknown): boolean {
  const { code, constraint } = (err ?? {}) as { code?: string; constraint?: string };
  return code === '23505' && constraint === 'command_log_pkey';
}

/** The outbox rows and the command_log row of one command, in one statement. */
function recordStatement(
  command: LoggedCommand,
  result: unknown,
  events: readonly DomainEvent[],
  onConflict: string,
): [string, Knex.RawBinding[]] {
  const row = rowOf(command, result);
  // The events as one JSON array, so the statement's text is the same whatever their number (it
  // runs prepared, and a `$batch` group can carry a thousand) and one native stringify encodes them.
  const outbox = events.length
    ? `with outboxed as (insert into outbox (event_id, event, origin)
         select (e->>'eventId')::uuid, e, ?::jsonb from jsonb_array_elements(?::jsonb) with ordinality as x(e, n) order by n) `
    : '';
  return [
    `${outbox}insert into command_log (command_id, name, entity, subject, request_hash, result)
     values (?, ?, ?, ?, ?, ?) ${onConflict}`,
    [
      ...(events.length ? [command.origin ? JSON.stringify(command.origin) : null, JSON.stringify(events)] : []),
      row.command_id,
      row.name,
      row.entity,
      row.subject,
      row.request_hash,
      row.result,
    ] as Knex.RawBinding[],
  ];
}

/** One command of a group committed together (workers/commands/group-commit.ts), as recordCommands records it. */
export interface GroupedRecord {
  command: LoggedCommand;
  result: unknown;
  events: readonly DomainEvent[];
}

/**
 * recordCommand for several commands applied in one transaction: every command_log row and every
 * outbox row (each event with its own command's origin) in one statement, whatever their number.
 * Returns how many command_log rows it inserted: fewer than the commands when an earlier delivery
 * recorded one of them, and the caller must then roll everything back.
 */
export async function recordCommands(trx: Knex.Transaction, records: readonly GroupedRecord[]): Promise<number> {
  const outbox = records.flatMap(({ command, events }) => events.map((event) => ({ event, origin: command.origin })));
  const rows = records.map(({ command, result }) => rowOf(command, result));
  // `result` is stored as the JSON text rowOf made of it; an absent origin or hash is null.
  const inserted = await (
    await statementsIn(trx)
  ).raw<{ rows: unknown[] }>(
    `with outboxed as (insert into outbox (event_id, event, origin)
       select (o->'event'->>'eventId')::uuid, o->'event', o->'origin'
       from jsonb_array_elements(?::jsonb) with ordinality as x(o, n) order by n)
     insert into command_log (command_id, name, entity, subject, request_hash, result)
     select c->>'command_id', c->>'name', c->>'entity', c->>'subject', c->>'request_hash', (c->>'result')::jsonb
     from jsonb_array_elements(?::jsonb) with ordinality as x(c, n) order by n
     on conflict (command_id) do nothing returning command_id`,
    [JSON.stringify(outbox), JSON.stringify(rows)],
  );
  return inserted.rows.length;
}

/**
 * Records a result outside any transaction: a failed command after its transaction rolled back
 * (nothing of it was applied), or a finished `$batch` with its whole response. Returns null when
 * recorded, or the entry of a delivery that got there first.
 */
export async function recordResult<R>(
  knex: Knex,
  command: LoggedCommand,
  result: R,
): Promise<CommandLogEntry<R> | null> {
  const inserted = await knex('command_log')
    .insert(rowOf(command, result))
    .onConflict('command_id')
    .ignore()
    .returning('command_id');
  if (inserted.length) return null;
  return findCommand<R>(knex, command.commandId);
}

/** Entries age out by creation: redeliveries and key repeats come long before the window ends. */
export const COMMAND_LOG_RETENTION: RetainedTable = {
  table: 'command_log',
  key: 'command_id',
  timeColumn: 'created_at',
};

/** A finished `$batch` as its worker recorded it (either format: batch-command.ts), or null. */
export async function findBatchRecord(
  knex: Knex,
  commandId: string,
): Promise<RecordedBatch | LegacyRecordedBatch | null> {
  const entry = await findCommand<RecordedBatch | LegacyRecordedBatch>(knex, commandId);
  const result = entry?.result;
  return result && ('results' in result || 'responses' in result) ? result : null;
}
