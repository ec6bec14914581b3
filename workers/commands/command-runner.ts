import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Command, CommandName, CommandResult } from '../../domain/commands/command';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { eventName, type DomainEvent } from '../../domain/events/domain-event';
import { encodeId } from '../../domain/ids/id-codec';
import { DEFAULT_PATCH_LIMITS, type PatchLimits } from '../../domain/writes/json-patch';
import { DEFAULT_GEOMETRY_LIMITS, type GeometryLimits } from '../../domain/writes/geometry-limits';
import { translateDbError } from '../../db/commands/db-errors';
import type { Logger } from '../../infra/logger';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import type { Applied, CommandHandler } from './command-handler';
import { createEntity } from './create-entity.handler';
import { deleteEntity } from './delete-entity.handler';
import { patchEntity } from './patch-entity.handler';
import { replaceEntity } from './replace-entity.handler';
import { createUnitOfWork, type HandlerCall, type TestPause } from './unit-of-work';

/**
 * Runs one command exactly once (DESIGN §1, §11): a unit of work (unit-of-work.ts) of one handler
 * call, its event and its command_log record. A database error its checks could not foresee (a
 * unique value taken by a concurrent write) is the client's failure, recorded as such.
 */

export const HANDLERS: Record<CommandName, CommandHandler> = {
  create: createEntity,
  replace: replaceEntity,
  patch: patchEntity,
  delete: deleteEntity,
};

/** Re-exported for command-process.ts, which reads it from the environment. */
export type { TestPause };

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

type Success = Extract<CommandResult, { ok: true }>;

export type CommandRunner = (command: Command, options?: RunOptions) => Promise<CommandResult>;

export function successOf(entity: EntityDefinition, applied: Applied): Success {
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

export interface CommandLimits {
  patchLimits: PatchLimits;
  geometryLimits: GeometryLimits;
}

/**
 * The handler call of one command: its handler on the unit's transaction, its result and its event;
 * a database error its checks could not foresee is the client's failure. A lone command's unit of
 * work is this one call; a `$batch` atomicity group's is one per request (group-runner.ts).
 */
export function commandCall(command: Command, limits: CommandLimits): HandlerCall<Success> {
  if (!Object.hasOwn(HANDLERS, command.name)) throw new Error(`unknown command name '${command.name}'`);
  const entity = entityByName(command.entity);
  return async (trx) => {
    try {
      const applied = await HANDLERS[command.name]({ trx, command, entity, ...limits });
      return { value: successOf(entity, applied), events: [eventOf(command, entity, applied)] };
    } catch (err) {
      throw err instanceof DomainError ? err : (translateDbError(err, entity) ?? err);
    }
  };
}

export function createCommandRunner(deps: CommandRunnerDeps): CommandRunner {
  const runUnit = createUnitOfWork(deps);
  const limits = {
    patchLimits: deps.patchLimits ?? DEFAULT_PATCH_LIMITS,
    geometryLimits: deps.geometryLimits ?? DEFAULT_GEOMETRY_LIMITS,
  };

  return async function run(command: Command, options: RunOptions = {}): Promise<CommandResult> {
    const handle = commandCall(command, limits);
    const entity = entityByName(command.entity);
    const outcome = await runUnit<Success, CommandResult>(
      {
        record: command,
        calls: () => [handle],
        succeeded: ([result]) => result!,
        failed: (failure) => ({ ok: false, failure }),
        translate: (err) => translateDbError(err, entity),
      },
      { redelivered: options.redelivered, logger: options.logger ?? deps.logger },
    );
    return outcome.result;
  };
}
