import type { Knex } from 'knex';
import type { Command } from '../../domain/commands/command';
import type { EntityDefinition } from '../../domain/entities';
import { notFound, preconditionFailed } from '../../domain/errors/domain-error';
import type { EventVerb } from '../../domain/events/domain-event';
import { encodeId } from '../../domain/ids/id-codec';
import { etagOf, ifMatchAccepts } from '../../domain/writes/entity-version';
import type { PatchLimits } from '../../domain/writes/json-patch';
import type { GeometryLimits } from '../../domain/writes/geometry-limits';
import type { Row } from '../../db/commands/entity-rows';

/**
 * One handler per command name. A handler runs inside the command's transaction, throws a
 * DomainError for any outcome that is the client's to fix, and reports what it applied; the
 * runner turns that into the result, the command_log entry and the domain event.
 */

export interface HandlerContext {
  trx: Knex.Transaction;
  command: Command;
  entity: EntityDefinition;
  patchLimits: PatchLimits;
  geometryLimits: GeometryLimits;
}

export interface Applied {
  dbId: number;
  /** Row version after the change (0 once deleted). */
  version: number;
  verb: EventVerb;
  changedFields: string[];
  /** Keys of the row's single relations: after the change, or as they were before a delete. */
  references: Record<string, number | null>;
}

export type CommandHandler = (ctx: HandlerContext) => Promise<Applied>;

export function targetKey(ctx: HandlerContext): number {
  const key = ctx.command.key;
  if (key === undefined) throw new Error(`${ctx.command.name} command ${ctx.command.commandId} carries no key`);
  return key;
}

export function rowNotFound(entity: EntityDefinition, key: number) {
  return notFound(`${entity.name} '${encodeId(entity.name, key)}' does not exist.`);
}

/** `If-Match` is compared under the row lock, so nothing can change between check and write. */
export function assertIfMatch(ctx: HandlerContext, row: Row): void {
  const header = ctx.command.ifMatch;
  if (header === undefined || ifMatchAccepts(header, row.version)) return;
  throw preconditionFailed(
    `${ctx.entity.name} '${encodeId(ctx.entity.name, row.id)}' has changed: If-Match ${header} does not match its ETag ${etagOf(row.version)}.`,
  );
}
