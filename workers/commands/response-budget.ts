import type { BatchWrite } from '../../domain/batch/batch-command';
import type { CommandResult } from '../../domain/commands/command';
import { entityByName, type EntityDefinition } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { readEntity, type KeyedRow, type ReadBudget } from '../../db/query/entity-reader';
import type { ReadDb } from '../../db/query/read-timeout';
import { bodyBytesOf, writtenResult, type RequestResult } from '../../domain/results/request-result';

/**
 * MAX_RESPONSE_BYTES for a whole `$batch` response (DESIGN §12, §13): each read of the batch (a GET,
 * a representation) may use what the earlier results' bodies left, checked in Postgres as for a
 * lone read.
 * Budgets are whole multiples of QUANTUM where they can be, so the statements' texts repeat (they
 * carry the limit).
 */

const QUANTUM = 64 * 1024;

export class ResponseBudget {
  /** `limit`: MAX_RESPONSE_BYTES, the whole batch's. */
  constructor(
    private readonly limit: number,
    private left = limit,
  ) {}

  /**
   * The budget of the next read: what is left, rounded down to a whole quantum when there is at
   * least one (below a quantum, the exact rest: the limit is never exceeded).
   */
  next(): ReadBudget {
    const left = Math.max(0, this.left);
    return {
      maxResponseBytes: left >= QUANTUM ? Math.floor(left / QUANTUM) * QUANTUM : left,
      wholeLimit: this.limit,
    };
  }

  /** A budget to spend tentatively (a transaction that may be rolled back and run again). */
  copy(): ResponseBudget {
    return new ResponseBudget(this.limit, this.left);
  }

  /** Spends what the result's body will take in the response (before the result is kept). */
  spend(result: RequestResult): void {
    this.left -= bodyBytesOf(result);
  }
}

/**
 * A written entity as a keyed GET shows it, for `Prefer: return=representation`, within the budget.
 * Past it the write's result goes without the entity (answered without `Preference-Applied`, which
 * tells the client the preference was not honoured): the write itself stands.
 */
export async function representation(
  db: ReadDb,
  entity: EntityDefinition,
  id: number,
  budget: ResponseBudget,
  odata?: BatchWrite['odata'],
): Promise<KeyedRow | null> {
  try {
    // Under `/odata` the entity carries its control information and no unexpanded relation.
    return await readEntity(db, entity, id, {
      ...budget.next(),
      ...(odata ? { odata: { control: odata.control } } : {}),
    });
  } catch (err) {
    if (err instanceof DomainError) return null;
    throw err;
  }
}

/** A write's result, with the entity when its request asked for one (never after a DELETE). */
export async function writtenOf(
  db: ReadDb,
  write: Pick<BatchWrite, 'name' | 'representation' | 'odata'>,
  result: Extract<CommandResult, { ok: true }>,
  budget: ResponseBudget,
): Promise<RequestResult> {
  const wanted = write.representation && write.name !== 'delete';
  const row = wanted ? await representation(db, entityByName(result.entity), result.dbId, budget, write.odata) : null;
  return writtenResult(write.name, result, row);
}
