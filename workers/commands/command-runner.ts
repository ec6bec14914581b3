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
import { DEFAULT_PATCH_LIMITS, type PatchLimits } from '../../domain/writes/json-patch';
import { DEFAULT_GEOMETRY_LIMITS, type GeometryLimits } from '../../domain/writes/geometry-limits';
import { storableText } from '../../domain/text/storable-text';
import { findCommand, recordCommand, recordResult, type CommandLogEntry } from '../../db/commands/command-log';
import { isRetryableDbError, translateDbError } from '../../db/commands/db-errors';
import type { Logger } from '../../infra/logger';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import type { Applied, CommandHandler } from './command-handler';
import { createEntity } from './create-entity.handler';
import { deleteEntity } from './delete-entity.handler';
import { patchEntity } from './patch-entity.handler';
import { replaceEntity } from './replace-entity.handler';

/**
 * Runs one command exactly once (DESIGN §1, §11): apply it, then write its event to the outbox and
 * its result to command_log, all in one transaction. A redelivery (stalled job, Idempotency-Key
 * repeat) finds the recorded result and returns it: up front when it may have run before, or at
 * the end, when its command_log insert finds the id taken and everything it did is rolled back.
 * Domain failures are results too (no retry); infrastructure errors throw so BullMQ retries the job.
 */

export const HANDLERS: Record<CommandName, CommandHandler> = {
  create: createEntity,
  replace: replaceEntity,
  patch: patchEntity,
  delete: deleteEntity,
};

/** Deadlocks and serialization failures are resolved by running the transaction again. */
export const MAX_TRANSACTION_ATTEMPTS = 3;

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
  /** Called after commit with the events just written to the outbox and the write's origin. */
  onCommitted(events: DomainEvent[], origin: WriteOrigin | undefined): void;
  testPause?: TestPause;
  /** MAX_PATCH_OPERATIONS / MAX_PATCHED_DOCUMENT_BYTES (the API checks the count too). */
  patchLimits?: PatchLimits;
  /** MAX_GEOMETRY_LENGTH / _VERTICES / _DEPTH: a body is checked here too, as the API checked it. */
  geometryLimits?: GeometryLimits;
}

export interface RunOptions {
  /** The job ran before (a retry or a stalled job): look for a recorded result first. */
  redelivered?: boolean;
  /** The job's logger, naming the write's request id (the runner's own logger otherwise). */
  logger?: Logger;
}

export type CommandRunner = (command: Command, options?: RunOptions) => Promise<CommandResult>;

/** Thrown inside the transaction to roll it back: an earlier delivery recorded this command. */
export class AlreadyRecorded extends Error {}

interface Outcome {
  result: CommandResult;
  events: DomainEvent[];
}

export function successOf(entity: EntityDefinition, applied: Applied): Extract<CommandResult, { ok: true }> {
  return {
    ok: true,
    entity: entity.name,
    dbId: applied.dbId,
    encodedId: encodeId(entity.name, applied.dbId),
    version: applied.version,
    ...(applied.verb === 'Deleted' ? { deleted: true } : {}),
  };
}

export function eventOf(command: Command, entity: EntityDefinition, applied: Applied): DomainEvent {
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
export function replayOf<R>(
  entry: CommandLogEntry<R>,
  command: Pick<Command, 'commandId' | 'requestHash'>,
): R | CommandResult {
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
  const pause = async (at: TestPause['at'], command: Command, logger: Logger) => {
    if (deps.testPause?.at !== at) return;
    logger.warn({ commandId: command.commandId, at, ms: deps.testPause.ms }, 'test pause');
    await sleep(deps.testPause.ms);
  };

  async function applyOnce(
    trx: Knex.Transaction,
    command: Command,
    entity: EntityDefinition,
    logger: Logger,
  ): Promise<Outcome> {
    const applied = await HANDLERS[command.name]({
      trx,
      command,
      entity,
      patchLimits: deps.patchLimits ?? DEFAULT_PATCH_LIMITS,
      geometryLimits: deps.geometryLimits ?? DEFAULT_GEOMETRY_LIMITS,
    });
    const result = successOf(entity, applied);
    const event = eventOf(command, entity, applied);
    if (!(await recordCommand(trx, command, result, [event]))) throw new AlreadyRecorded();
    await pause('before-commit', command, logger);
    return { result, events: [event] };
  }

  async function recorded(command: Command): Promise<CommandResult | null> {
    const earlier = await findCommand(deps.knex, command.commandId);
    return earlier ? replayOf(earlier, command) : null;
  }

  async function recordFailed(command: Command, error: DomainError): Promise<CommandResult> {
    // Messages may quote what the client sent: whatever it was, the record must be storable.
    const failure = error.toFailure();
    const result: CommandResult = { ok: false, failure: { ...failure, errors: failure.errors.map(storableText) } };
    const earlier = await recordResult(deps.knex, command, result);
    return earlier ? replayOf(earlier, command) : result;
  }

  return async function run(command: Command, options: RunOptions = {}): Promise<CommandResult> {
    if (!Object.hasOwn(HANDLERS, command.name)) throw new Error(`unknown command name '${command.name}'`);
    const entity = entityByName(command.entity);
    const logger = options.logger ?? deps.logger;
    // Repeats are expected here; a first delivery skips the lookup (the final insert still guards).
    if (options.redelivered || command.requestHash) {
      const replay = await recorded(command);
      if (replay) return replay;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await Model.transaction(deps.knex, (trx) => applyOnce(trx, command, entity, logger));
        if (outcome.events.length) deps.onCommitted(outcome.events, command.origin);
        await pause('after-commit', command, logger);
        return outcome.result;
      } catch (err) {
        if (err instanceof AlreadyRecorded) {
          const replay = await recorded(command);
          if (!replay) throw new Error(`command ${command.commandId} was recorded and then vanished`, { cause: err });
          return replay;
        }
        const failure = err instanceof DomainError ? err : translateDbError(err, entity);
        if (failure) return recordFailed(command, failure);
        if (isRetryableDbError(err) && attempt < MAX_TRANSACTION_ATTEMPTS) {
          logger.info(
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
