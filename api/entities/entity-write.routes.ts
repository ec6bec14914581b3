import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { readEntity } from '../../db/query/entity-reader';
import type { Command, CommandName, CommandResult } from '../../domain/commands/command';
import type { EntityDefinition } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import { idempotentCommandId, newCommandId, requestHash } from '../../domain/writes/command-ids';
import type { PatchLimits } from '../../domain/writes/json-patch';
import { callerOf } from '../auth/caller';
import type { CommandBus } from '../commands/command-bus';
import { sendCommand } from '../commands/send-command';
import { idempotencyKeyOf } from '../commands/idempotency-key';
import { writtenResult } from '../../domain/results/request-result';
import { prefersRepresentation, writtenAnswer } from '../http/answer';
import { sendAnswer } from '../http/send-answer';
import { routeOf } from '../routes/dispatch';
import type { Method } from '../routes/route';
import { WRONG_MEDIA_TYPE, writeCommandOf, type WriteInput } from './write-command';
import type { ReplicaSet } from '../../db/replicas/replica-set';

/**
 * POST, PATCH, PUT and DELETE on every entity route (spec §4, §4.2, §4.3, §7; DESIGN §6). The API
 * validates and turns the request into a command (write-command.ts, as for the same request in a
 * `$batch`); a command worker applies it. The API never writes to Postgres itself; it only re-reads
 * the entity when a representation is asked for.
 */

export interface WriteRouteDeps {
  knex: Knex;
  commandBus: CommandBus;
  commandTimeoutMs: number;
  patchLimits: PatchLimits;
  geometryLimits: GeometryLimits;
  /** With replicas, a write answer carries X-Consistency-Token (DESIGN §14). */
  replicas?: ReplicaSet;
}

type SuccessResult = Extract<CommandResult, { ok: true }>;

function wantsRepresentation(req: Request): boolean {
  return prefersRepresentation(req.get('prefer'));
}

/**
 * A request as the write builder reads it (write-command.ts). Its body counts when it has the media
 * type the route takes; `undefined` when there is no body at all (then the body checks say what is
 * missing).
 */
export function writeInputOf(req: Request): WriteInput {
  const key = req.params.key as string | undefined;
  const ifMatch = req.get('if-match');
  return {
    ...(key === undefined ? {} : { key }),
    ...(ifMatch === undefined ? {} : { ifMatch }),
    body: (mediaType) => {
      const matched = req.is(mediaType);
      if (matched === null) return undefined;
      return matched === false ? WRONG_MEDIA_TYPE : (req.body as unknown);
    },
  };
}

export function entityWriteHandlers(
  deps: WriteRouteDeps,
): Record<'createEntity' | 'replaceEntity' | 'patchEntity' | 'deleteEntity', RequestHandler> {
  /** Sends the command; answers its success, or throws its failure (202 and 503: send-command.ts). */
  async function execute(
    req: Request,
    res: Response,
    command: Command,
    onSuccess: (result: SuccessResult) => Promise<void>,
  ): Promise<void> {
    const result = await sendCommand<CommandResult>(req, res, deps.commandBus, command, deps.commandTimeoutMs);
    if (result === undefined) return;
    if (!result.ok) throw DomainError.from(result.failure);
    await onSuccess(result);
  }

  /**
   * A success (api/http/answer.ts): the entity, re-read as a keyed GET shows it, only when a
   * representation is asked for (spec §4.2); with replicas, where the primary's WAL is now.
   */
  async function answerSuccess(
    req: Request,
    res: Response,
    command: Command,
    entity: EntityDefinition,
    result: SuccessResult,
  ) {
    const [row, walPosition] = await Promise.all([
      command.name !== 'delete' && wantsRepresentation(req) ? readEntity(deps.knex, entity, result.dbId) : null,
      deps.replicas?.walPositionNow(),
    ]);
    sendAnswer(res, writtenAnswer(writtenResult(command.name, result, row), walPosition));
  }

  /** A write of the route the request was dispatched to (read models have no write routes). */
  const write =
    (name: CommandName): RequestHandler =>
    async (req, res) => {
      const route = routeOf(req);
      const entity = route.entity!;
      const accepts = route.operations[req.method as Method]?.accepts;
      const { fields, raw } = writeCommandOf(entity, name, accepts, writeInputOf(req), deps);
      const subject = callerOf(req).subject;
      const key = name === 'create' ? idempotencyKeyOf(req) : undefined;
      const command: Command = {
        commandId: key === undefined ? newCommandId() : idempotentCommandId(subject, key),
        subject,
        issuedAt: new Date().toISOString(),
        ...fields,
        ...(key === undefined ? {} : { requestHash: requestHash('POST', entity.route, raw) }),
      };
      await execute(req, res, command, (result) => answerSuccess(req, res, command, entity, result));
    };

  return {
    createEntity: write('create'),
    replaceEntity: write('replace'),
    patchEntity: write('patch'),
    deleteEntity: write('delete'),
  };
}
