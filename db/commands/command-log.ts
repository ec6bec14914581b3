import type { Knex } from 'knex';
import type { Command, CommandResult } from '../../domain/commands/command';

/**
 * command_log: the exactly-once guarantee of the write side (DESIGN §11). A command claims its id
 * first thing in its transaction; a second delivery of the same id waits on that primary key until
 * the first commits or rolls back, then either finds the recorded result or claims the id itself.
 */

export interface CommandLogEntry {
  commandId: string;
  name: string;
  entity: string;
  subject: string;
  requestHash: string | null;
  result: CommandResult | null;
}

interface CommandLogRow {
  command_id: string;
  name: string;
  entity: string;
  subject: string;
  request_hash: string | null;
  result: CommandResult | null;
}

function entryOf(row: CommandLogRow): CommandLogEntry {
  return {
    commandId: row.command_id,
    name: row.name,
    entity: row.entity,
    subject: row.subject,
    requestHash: row.request_hash,
    result: row.result,
  };
}

function rowOf(command: Command, result: CommandResult | null) {
  return {
    command_id: command.commandId,
    name: command.name,
    entity: command.entity,
    subject: command.subject,
    request_hash: command.requestHash ?? null,
    result: result === null ? null : JSON.stringify(result),
  };
}

export async function findCommand(knex: Knex | Knex.Transaction, commandId: string): Promise<CommandLogEntry | null> {
  const row = (await knex('command_log').where('command_id', commandId).first()) as CommandLogRow | undefined;
  return row ? entryOf(row) : null;
}

/**
 * Claims the command's id in `trx`. Returns null when this delivery owns it (and must apply the
 * command), or the entry an earlier delivery committed.
 */
export async function claimCommand(trx: Knex.Transaction, command: Command): Promise<CommandLogEntry | null> {
  const claimed = await trx('command_log')
    .insert(rowOf(command, null))
    .onConflict('command_id')
    .ignore()
    .returning('command_id');
  if (claimed.length) return null;
  return findCommand(trx, command.commandId);
}

export async function recordResult(trx: Knex.Transaction, commandId: string, result: CommandResult): Promise<void> {
  await trx('command_log')
    .where('command_id', commandId)
    .update({ result: JSON.stringify(result) });
}

/**
 * Records a failed command after its transaction rolled back (nothing of it was applied). Returns
 * null when recorded, or the entry of a delivery that got there first.
 */
export async function recordFailure(
  knex: Knex,
  command: Command,
  result: CommandResult,
): Promise<CommandLogEntry | null> {
  const inserted = await knex('command_log')
    .insert(rowOf(command, result))
    .onConflict('command_id')
    .ignore()
    .returning('command_id');
  if (inserted.length) return null;
  return findCommand(knex, command.commandId);
}

/** Entries older than the retention window: redeliveries and key repeats come long before. */
export async function pruneCommandLog(knex: Knex, olderThanMs: number, batch = 5000): Promise<number> {
  return knex('command_log')
    .whereIn(
      'command_id',
      knex('command_log')
        .select('command_id')
        .where('created_at', '<', new Date(Date.now() - olderThanMs))
        .limit(batch),
    )
    .delete();
}
