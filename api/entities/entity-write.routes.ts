import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { readEntity } from '../../db/query/entity-reader';
import type { Command, CommandName, CommandResult } from '../../domain/commands/command';
import type { EntityDefinition } from '../../domain/entities';
import { keyOf } from '../../domain/entities/entity-key';
import { DomainError, unsupportedMediaType } from '../../domain/errors/domain-error';
import { parseWriteBody } from '../../domain/validation/write-body';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import { idempotentCommandId, newCommandId, requestHash } from '../../domain/writes/command-ids';
import { parsePatch, type PatchLimits } from '../../domain/writes/json-patch';
import { callerOf } from '../auth/caller';
import type { CommandBus } from '../commands/command-bus';
import { sendCommand } from '../commands/send-command';
import { idempotencyKeyOf } from '../commands/idempotency-key';
import { writtenResult } from '../../domain/results/request-result';
import { prefersRepresentation, writtenAnswer } from '../http/answer';
import { sendAnswer } from '../http/send-answer';
import { routeOf } from '../routes/dispatch';
import type { ReplicaSet } from '../../db/replicas/replica-set';

/**
 * POST, PATCH, PUT and DELETE on every entity route (spec §4, §4.2, §4.3, §7; DESIGN §6). The API
 * validates and turns the request into a command; a command worker applies it. The API never
 * writes to Postgres itself; it only re-reads the entity when a representation is asked for.
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
 * The request body, if it has the media type the verb takes. `undefined` when there is no body at
 * all (then the body checks say what is missing); 415 for any other media type.
 */
function bodyOfType(req: Request, mediaType: string, verbs: string): unknown {
  const matched = req.is(mediaType);
  if (matched === null) return undefined;
  if (matched === false) throw unsupportedMediaType(`${verbs} take ${mediaType}.`);
  return req.body as unknown;
}

/** The entity of the route the request was dispatched to (read models have no write routes). */
function writableEntity(req: Request): EntityDefinition {
  return routeOf(req).entity!;
}

/** A command from the request; the caller is looked up once, by the route, and passed in. */
function commandOf(
  req: Request,
  subject: string,
  entity: EntityDefinition,
  name: CommandName,
  fields: Partial<Command>,
): Command {
  const ifMatch = name === 'create' ? undefined : req.get('if-match');
  return {
    commandId: newCommandId(),
    name,
    entity: entity.name,
    subject,
    issuedAt: new Date().toISOString(),
    ...(ifMatch === undefined ? {} : { ifMatch }),
    ...fields,
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

  const createEntity: RequestHandler = async (req, res) => {
    const entity = writableEntity(req);
    const raw = bodyOfType(req, 'application/json', 'POST and PUT');
    const body = parseWriteBody(entity, raw, deps.geometryLimits);
    const key = idempotencyKeyOf(req);
    const subject = callerOf(req).subject;
    const command = commandOf(
      req,
      subject,
      entity,
      'create',
      key === undefined
        ? { body }
        : { body, commandId: idempotentCommandId(subject, key), requestHash: requestHash('POST', entity.route, raw) },
    );
    await execute(req, res, command, (result) => answerSuccess(req, res, command, entity, result));
  };

  const replaceEntity: RequestHandler = async (req, res) => {
    const entity = writableEntity(req);
    const id = keyOf(entity, req.params.key as string);
    const raw = bodyOfType(req, 'application/json', 'POST and PUT');
    const body = parseWriteBody(entity, raw, deps.geometryLimits, id);
    const command = commandOf(req, callerOf(req).subject, entity, 'replace', { key: id, body });
    await execute(req, res, command, (result) => answerSuccess(req, res, command, entity, result));
  };

  const patchEntity: RequestHandler = async (req, res) => {
    const entity = writableEntity(req);
    const id = keyOf(entity, req.params.key as string);
    const raw = bodyOfType(req, 'application/json-patch+json', 'PATCH requests');
    const patch = parsePatch(entity, raw, deps.patchLimits, deps.geometryLimits);
    const command = commandOf(req, callerOf(req).subject, entity, 'patch', { key: id, patch });
    await execute(req, res, command, (result) => answerSuccess(req, res, command, entity, result));
  };

  const deleteEntity: RequestHandler = async (req, res) => {
    const entity = writableEntity(req);
    const id = keyOf(entity, req.params.key as string);
    const command = commandOf(req, callerOf(req).subject, entity, 'delete', { key: id });
    await execute(req, res, command, (result) => answerSuccess(req, res, command, entity, result));
  };

  return { createEntity, replaceEntity, patchEntity, deleteEntity };
}
