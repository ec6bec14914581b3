import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { Model } from 'objection';
import type { Command, CommandName, CommandResult } from '../../domain/commands/command';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { DomainError, conflict } from '../../domain/errors/domain-error';
import { eventName, type DomainEvent } from '../../domain/events/domain-event';
import { encodeId } from '../../domain/ids/id-codec';
import { IDEMPOTENCY_KEY_REUSED } from '../../domain/writes/command-ids';
import { claimCommand, recordFailure, recordResult, type CommandLogEntry } from '../../db/commands/command-log';
import { isRetryableDbError, translateDbError } from '../../db/commands/db-errors';
import { addToOutbox } from '../../db/commands/outbox';
import type { Logger } from '../../db/infra/logger';
import type { Applied, CommandHandler } from './command-handler';
import { createEntity } from './create-entity.handler';
import { deleteEntity } from './delete-entity.handler';
import { patchEntity } from './patch-entity.handler';
import { replaceEntity } from './replace-entity.handler';

/**
 * Runs one command exactly once (DESIGN §1, §11): claim its id in command_log, apply it, write its
 * event to the outbox and its result to command_log, all in one transaction. A redelivery (stalled
 * job, Idempotency-Key repeat) finds the recorded result and returns it. Domain failures are
 * results too (no retry); infrastructure errors throw so BullMQ retries the job.
 */

const HANDLERS: Record<CommandName, CommandHandler> = {
  create: createEntity,
  replace: replaceEntity,
  patch: patchEntity,
  delete: deleteEntity,
};

/** Deadlocks and serialization failures are resolved by running the transaction again. */
const MAX_TRANSACTION_ATTEMPTS = 3;

/**
 * Test-only: hold a command open at a point of its life so a test can kill the process there
 * (set by workers/commands/main.ts from COMMAND_TEST_PAUSE_MS / COMMAND_TEST_PAUSE_AT).
 */
export interface TestPause {
  at: 'before-commit' | 'after-commit';
  ms: number;
}

export interface CommandRunnerDeps {
  knex: Knex;
  logger: Logger;
  /** Called after commit with the ids of the events just written to the outbox. */
  onCommitted(eventIds: string[]): void;
  testPause?: TestPause;
}

export type CommandRunner = (command: Command) => Promise<CommandResult>;

interface Outcome {
  result: CommandResult;
  eventIds: string[];
}

function successOf(entity: EntityDefinition, applied: Applied): CommandResult {
  return {
    ok: true,
    entity: entity.name,
    dbId: applied.dbId,
    encodedId: encodeId(entity.name, applied.dbId),
    version: applied.version,
    ...(applied.verb === 'Deleted' ? { deleted: true } : {}),
  };
}

function eventOf(command: Command, entity: EntityDefinition, applied: Applied): DomainEvent {
  return {
    eventId: randomUUID(),
    name: eventName(entity.name, applied.verb),
    entityType: entity.name,
    entityId: encodeId(entity.name, applied.dbId),
    dbId: applied.dbId,
    changedFields: applied.changedFields,
    subject: command.subject,
    commandId: command.commandId,
    occurredAt: new Date().toISOString(),
    version: applied.version,
    references: applied.references,
  };
}

/** The recorded result of an earlier delivery; a key reused for another request is a conflict. */
function replayOf(entry: CommandLogEntry, command: Command): CommandResult {
  if ((entry.requestHash ?? null) !== (command.requestHash ?? null)) {
    return {
      ok: false,
      failure: conflict([IDEMPOTENCY_KEY_REUSED]).toFailure(),
    };
  }
  if (!entry.result) throw new Error(`command ${command.commandId} is logged without a result`);
  return entry.result;
}

export function createCommandRunner(deps: CommandRunnerDeps): CommandRunner {
  const pause = async (at: TestPause['at'], command: Command) => {
    if (deps.testPause?.at !== at) return;
    deps.logger.warn({ commandId: command.commandId, at, ms: deps.testPause.ms }, 'test pause');
    await sleep(deps.testPause.ms);
  };

  async function applyOnce(trx: Knex.Transaction, command: Command, entity: EntityDefinition): Promise<Outcome> {
    const earlier = await claimCommand(trx, command);
    if (earlier) return { result: replayOf(earlier, command), eventIds: [] };
    const applied = await HANDLERS[command.name]({ trx, command, entity });
    const result = successOf(entity, applied);
    const event = eventOf(command, entity, applied);
    await addToOutbox(trx, [event]);
    await recordResult(trx, command.commandId, result);
    await pause('before-commit', command);
    return { result, eventIds: [event.eventId] };
  }

  async function recordFailed(command: Command, error: DomainError): Promise<CommandResult> {
    const result: CommandResult = { ok: false, failure: error.toFailure() };
    const earlier = await recordFailure(deps.knex, command, result);
    return earlier ? replayOf(earlier, command) : result;
  }

  return async function run(command: Command): Promise<CommandResult> {
    if (!HANDLERS[command.name]) throw new Error(`unknown command name '${command.name}'`);
    const entity = entityByName(command.entity);
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await Model.transaction(deps.knex, (trx) => applyOnce(trx, command, entity));
        if (outcome.eventIds.length) deps.onCommitted(outcome.eventIds);
        await pause('after-commit', command);
        return outcome.result;
      } catch (err) {
        const failure = err instanceof DomainError ? err : translateDbError(err, entity);
        if (failure) return recordFailed(command, failure);
        if (isRetryableDbError(err) && attempt < MAX_TRANSACTION_ATTEMPTS) {
          deps.logger.info(
            { commandId: command.commandId, attempt, code: (err as { code?: string }).code },
            'retrying transaction',
          );
          continue;
        }
        throw err;
      }
    }
  };
}
