import { Router, type NextFunction, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { readEntity } from '../../db/query/entity-reader';
import type { Command, CommandName, CommandResult } from '../../domain/commands/command';
import { READ_MODELS, entityByRoute, type EntityDefinition } from '../../domain/entities';
import {
  DEFAULT_RETRY_AFTER_SECONDS,
  DomainError,
  badRequest,
  methodNotAllowed,
  unavailable,
  unsupportedMediaType,
} from '../../domain/errors/domain-error';
import { parseWriteBody } from '../../domain/validation/write-body';
import { idempotentCommandId, newCommandId, requestHash } from '../../domain/writes/command-ids';
import { etagOf } from '../../domain/writes/entity-version';
import { parsePatch, type PatchLimits } from '../../domain/writes/json-patch';
import { callerOf } from '../auth/caller';
import { QueueUnavailableError, type CommandBus } from '../commands/command-bus';
import { COMMAND_NOT_APPLIED, commandLocation, commandStateOf, entityLocation } from '../commands/command-state';
import { keyOf } from './entity-key';

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
}

type SuccessResult = Extract<CommandResult, { ok: true }>;

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** Spec §4.2: the whole value, compared case-insensitively; anything else means minimal. */
function wantsRepresentation(req: Request): boolean {
  return req.get('prefer')?.trim().toLowerCase() === 'return=representation';
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

/**
 * The entity a write names. Read models (`/Activities`) are written only by workers: 405. Other
 * unknown routes fall through (undefined) to whatever else is mounted, and in the end to a 404.
 */
function writableEntity(req: Request): EntityDefinition | undefined {
  const route = req.params.route as string;
  if (READ_MODELS.some((model) => model.route === route)) throw methodNotAllowed(`/${route} is read-only.`, ['GET']);
  return entityByRoute(route);
}

function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters.');
  return key;
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

export function entityWriteRoutes(deps: WriteRouteDeps): Router {
  const router = Router();

  /**
   * Sends the command and answers: `onSuccess` for a success, 202 + `/Commands/<id>` when it is
   * still running at the deadline; throws the command's failure, or Unavailable when the queue failed.
   */
  async function execute(
    req: Request,
    res: Response,
    command: Command,
    onSuccess: (result: SuccessResult) => Promise<void>,
  ): Promise<void> {
    let dispatched;
    try {
      dispatched = await deps.commandBus.dispatch(command, deps.commandTimeoutMs);
    } catch (err) {
      if (!(err instanceof QueueUnavailableError)) throw err;
      req.log.warn(
        { commandId: command.commandId, maybeQueued: err.maybeQueued, err: (err.cause as Error)?.message },
        'command not enqueued',
      );
      if (!err.maybeQueued) throw unavailable('The command queue is unavailable; nothing was changed.');
      // The job may have reached Redis before the connection failed: say so, and where to look.
      const outcomeAt = commandLocation(command.commandId);
      throw unavailable(
        `The command queue became unreachable while the command was being queued; it may still be applied. Its outcome will be at ${outcomeAt} once the queue is back.`,
        DEFAULT_RETRY_AFTER_SECONDS,
        outcomeAt,
      );
    }
    switch (dispatched.state) {
      case 'pending':
        res
          .status(202)
          .location(commandLocation(command.commandId))
          .json(commandStateOf(command.commandId, dispatched));
        return;
      case 'failed':
        // Never the client's doing (domain failures are results): a store or a worker failed.
        req.log.warn({ commandId: command.commandId, reason: dispatched.reason }, 'command failed');
        throw unavailable(
          command.requestHash
            ? `${COMMAND_NOT_APPLIED.slice(0, -1)} (with the same Idempotency-Key).`
            : COMMAND_NOT_APPLIED,
        );
      case 'finished':
        if (!dispatched.result.ok) throw DomainError.from(dispatched.result.failure);
        await onSuccess(dispatched.result);
    }
  }

  /**
   * A success: POST 201 + Location, PATCH/PUT 200 or 204; the entity, re-read as a keyed GET shows
   * it, only when a representation is asked for (spec §4.2); the ETag of the written version.
   */
  async function answerSuccess(req: Request, res: Response, entity: EntityDefinition, result: SuccessResult) {
    const created = req.method === 'POST';
    if (created) res.location(entityLocation(entity.name, result.encodedId));
    const row = wantsRepresentation(req) ? await readEntity(deps.knex, entity, result.dbId) : null;
    res.setHeader('ETag', etagOf(row?.version ?? result.version));
    if (!row) {
      res.status(created ? 201 : 204).end();
      return;
    }
    res.setHeader('Preference-Applied', 'return=representation');
    res
      .status(created ? 201 : 200)
      .type('application/json')
      .send(row.json);
  }

  router.post('/:route', async (req, res, next: NextFunction) => {
    const entity = writableEntity(req);
    if (!entity) return next();
    const raw = bodyOfType(req, 'application/json', 'POST and PUT');
    const body = parseWriteBody(entity, raw);
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
    await execute(req, res, command, (result) => answerSuccess(req, res, entity, result));
  });

  router.put('/:route/:key', async (req, res, next: NextFunction) => {
    const entity = writableEntity(req);
    if (!entity) return next();
    const id = keyOf(entity, req.params.key as string);
    const raw = bodyOfType(req, 'application/json', 'POST and PUT');
    const body = parseWriteBody(entity, raw, id);
    const command = commandOf(req, callerOf(req).subject, entity, 'replace', { key: id, body });
    await execute(req, res, command, (result) => answerSuccess(req, res, entity, result));
  });

  router.patch('/:route/:key', async (req, res, next: NextFunction) => {
    const entity = writableEntity(req);
    if (!entity) return next();
    const id = keyOf(entity, req.params.key as string);
    const raw = bodyOfType(req, 'application/json-patch+json', 'PATCH requests');
    const patch = parsePatch(entity, raw, deps.patchLimits);
    const command = commandOf(req, callerOf(req).subject, entity, 'patch', { key: id, patch });
    await execute(req, res, command, (result) => answerSuccess(req, res, entity, result));
  });

  router.delete('/:route/:key', async (req, res, next: NextFunction) => {
    const entity = writableEntity(req);
    if (!entity) return next();
    const id = keyOf(entity, req.params.key as string);
    const command = commandOf(req, callerOf(req).subject, entity, 'delete', { key: id });
    await execute(req, res, command, async () => {
      res.status(204).end();
    });
  });

  return router;
}
