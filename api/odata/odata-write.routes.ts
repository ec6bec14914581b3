import type { Request, RequestHandler, Response } from 'express';
import { odataReadOperation, type ODataReadResult } from '../../db/query/odata-read';
import { onPool, readSettingsOf, type ReadConfig } from '../../db/query/read-operation';
import type { Command, CommandName, CommandResult } from '../../domain/commands/command';
import type { EntityDefinition } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { DEFAULT_TOP } from '../../domain/queries/read-options';
import { writtenResult } from '../../domain/results/request-result';
import { idempotentCommandId, newCommandId, requestHash } from '../../domain/writes/command-ids';
import { callerOf } from '../auth/caller';
import { idempotencyKeyOf } from '../commands/idempotency-key';
import { sendCommand } from '../commands/send-command';
import { writeInputOf, type WriteRouteDeps } from '../entities/entity-write.routes';
import { CONSISTENCY_TOKEN_HEADER, tokenOfLsn } from '../http/consistency';
import { sendAnswer } from '../http/send-answer';
import { routeOf } from '../routes/dispatch';
import type { Method } from '../routes/route';
import { NAMESPACE } from './metadata/structured-types';
import { odataWrittenAnswer } from './odata-answer';
import { metadataLevelOf, returnPreference, type MetadataLevel } from './odata-format';
import { odataWriteCommandOf } from './odata-write-command';
import { serviceRootOf } from './service-root';

/**
 * POST, PATCH, PUT and DELETE under `/odata` (DESIGN §17): the request becomes the command the same
 * change at the root becomes (odata-write-command.ts), sent and awaited as at the root
 * (entity-write.routes.ts: 202 while it runs, 503 when the queue fails); only the answer is OData's
 * (odata-answer.ts), with the entity re-read from the primary as a keyed `/odata` read shows it.
 * Failures are thrown and rendered as OData errors by the one error handler.
 */

type ODataWriteRouteDeps = WriteRouteDeps & ReadConfig;

type Handlers = Record<'odataCreate' | 'odataReplace' | 'odataPatch' | 'odataDelete', RequestHandler>;

export function odataWriteHandlers(deps: ODataWriteRouteDeps): Handlers {
  const settings = readSettingsOf(deps);
  // A representation after a write is read from the primary, which has the commit (as at the root).
  const primary = onPool(deps.knex, settings.timeoutMs);

  /** The written entity as `GET /odata/<Set>('k')` shows it; null when it is gone meanwhile (the write stands). */
  async function representation(entity: EntityDefinition, encodedId: string, level: MetadataLevel, req: Request) {
    const request = {
      set: entity.route,
      key: encodedId,
      query: {},
      pageSize: Math.min(DEFAULT_TOP, settings.limits.maxTop),
      control: {
        etag: level !== 'none',
        ...(level === 'full' ? { full: { serviceRoot: serviceRootOf(req), namespace: NAMESPACE } } : {}),
      },
    };
    try {
      return await odataReadOperation(primary, request, settings);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'NotFound') return null;
      throw err;
    }
  }

  const write =
    (name: CommandName): RequestHandler =>
    async (req: Request, res: Response) => {
      const route = routeOf(req);
      const entity = route.entity!;
      const accepts = route.operations[req.method as Method]?.accepts;
      // Read before anything is sent: an unreadable `$format`/`Accept` is a 400 that changes nothing.
      const level = metadataLevelOf(req);
      const asked = returnPreference(req);
      const { fields, raw } = odataWriteCommandOf(entity, name, accepts, writeInputOf(req), deps);
      const subject = callerOf(req).subject;
      const idempotencyKey = name === 'create' ? idempotencyKeyOf(req) : undefined;
      const command: Command = {
        commandId: idempotencyKey === undefined ? newCommandId() : idempotentCommandId(subject, idempotencyKey),
        subject,
        issuedAt: new Date().toISOString(),
        ...fields,
        ...(idempotencyKey === undefined ? {} : { requestHash: requestHash('POST', entity.route, raw) }),
      };
      const result = await sendCommand<CommandResult>(req, res, deps.commandBus, command, deps.commandTimeoutMs);
      if (result === undefined) return;
      if (!result.ok) throw DomainError.from(result.failure);
      // OData's default: the entity after a create, nothing after an update (DESIGN §17).
      const returns = name !== 'delete' && (asked ?? (name === 'create' ? 'representation' : 'minimal'));
      const [entityRead, walPosition] = await Promise.all([
        returns === 'representation'
          ? representation(entity, result.encodedId, level, req)
          : Promise.resolve<ODataReadResult | null>(null),
        deps.replicas?.walPositionNow(),
      ]);
      const written = writtenResult(name, result, null);
      const answer = odataWrittenAnswer(written, entityRead, {
        serviceRoot: serviceRootOf(req),
        set: entity.route,
        level,
        ...(asked === undefined ? {} : { asked }),
      });
      if (walPosition !== undefined) answer.headers[CONSISTENCY_TOKEN_HEADER] = tokenOfLsn(walPosition);
      sendAnswer(res, answer);
    };

  return {
    odataCreate: write('create'),
    odataReplace: write('replace'),
    odataPatch: write('patch'),
    odataDelete: write('delete'),
  };
}
