import type { Knex } from 'knex';
import { Model } from 'objection';
import type { Command, CommandResult } from '../../domain/commands/command';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import { recordCommands } from '../../db/commands/command-log';
import type { Logger } from '../../infra/logger';
import { commandCall, type CommandLimits, type CommandRunner, type RunOptions } from './command-runner';
import { testPauseAt, type Called, type TestPause } from './unit-of-work';

/**
 * Group commit (issue 28): the commands a worker holds at the same moment are applied in one
 * transaction, with one statement recording every command_log and outbox row and one COMMIT, so
 * the `BEGIN`, the record and the `COMMIT` — three of a POST's four round trips to Postgres, whose
 * socket writes were a third of the command worker's CPU — are paid once per group. Each command
 * still commits with its command_log row and its events (the same transaction), and each job still
 * completes with its own result.
 *
 * Only the happy path is grouped. When anything goes wrong in a group (one command's failure, a
 * command an earlier delivery recorded, a deadlock, a lost connection), the transaction rolls back,
 * nothing of it is applied, and every command of the group runs alone through the lone runner,
 * exactly as it would have without grouping: a failure fails only its own command, and the lone
 * runner's exactly-once checks decide each one. Redeliveries and Idempotency-Key requests (which
 * look their id up first) always run alone. A command that arrives while nothing else is waiting
 * runs at once, alone: grouping adds no wait at low load.
 */

/** Commands in one transaction at most (the worker's concurrency bounds it too). */
const MAX_GROUP = 32;
/** Groups in flight at once per process: while one commits, the next gathers and runs. */
const GROUPS_IN_FLIGHT = 2;

export interface GroupCommitDeps {
  knex: Knex;
  logger: Logger;
  limits: CommandLimits;
  /** Runs one command alone (command-runner.ts): single commands, and every command of a failed group. */
  runAlone: CommandRunner;
  /** Called after commit with each command's events and the command's origin. */
  onCommitted(events: DomainEvent[], origin: WriteOrigin | undefined): void;
  testPause?: TestPause;
}

interface Waiting {
  command: Command;
  options: RunOptions;
  resolve(result: CommandResult): void;
  reject(err: unknown): void;
}

/** Thrown inside a group's transaction to roll it back so its commands run alone. */
class GroupAbandoned extends Error {}

export function createGroupCommitRunner(deps: GroupCommitDeps): CommandRunner {
  const waiting: Waiting[] = [];
  let inFlight = 0;

  const alone = (item: Waiting) => deps.runAlone(item.command, item.options).then(item.resolve, item.reject);

  /** Applies the group in one transaction; false when it rolled back (nothing applied). */
  async function applyTogether(group: Waiting[]): Promise<boolean> {
    const logger = group[0]!.options.logger ?? deps.logger;
    try {
      const called = await Model.transaction(deps.knex, async (trx) => {
        const done: Called<CommandResult>[] = [];
        for (const item of group) done.push(await commandCall(item.command, deps.limits)(trx));
        const records = group.map((item, i) => ({
          command: item.command,
          result: done[i]!.value,
          events: done[i]!.events,
        }));
        if ((await recordCommands(trx, records)) !== group.length) throw new GroupAbandoned();
        await testPauseAt(deps.testPause, 'before-commit', group[0]!.command.commandId, logger);
        return done;
      });
      group.forEach((item, i) => {
        const { events, value } = called[i]!;
        if (events.length) deps.onCommitted([...events], item.command.origin);
        item.resolve(value);
      });
      await testPauseAt(deps.testPause, 'after-commit', group[0]!.command.commandId, logger);
      return true;
    } catch (err) {
      logger.debug(
        { commands: group.length, err: (err as Error).message, abandoned: err instanceof GroupAbandoned },
        'group rolled back: its commands run alone',
      );
      return false;
    }
  }

  async function runGroup(group: Waiting[]): Promise<void> {
    if (group.length === 1 || !(await applyTogether(group))) await Promise.all(group.map(alone));
  }

  function next(): void {
    while (inFlight < GROUPS_IN_FLIGHT && waiting.length) {
      const group = waiting.splice(0, MAX_GROUP);
      inFlight++;
      void runGroup(group).finally(() => {
        inFlight--;
        next();
      });
    }
  }

  return (command, options = {}) => {
    // A command that may have run before looks its recorded result up first: the lone path does.
    if (options.redelivered || command.requestHash) return deps.runAlone(command, options);
    return new Promise<CommandResult>((resolve, reject) => {
      waiting.push({ command, options, resolve, reject });
      // Jobs fetched together arrive in the same turn: gather them before the first group starts.
      if (waiting.length === 1) setImmediate(next);
    });
  };
}
