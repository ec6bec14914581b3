import type { EntityDefinition } from '../../domain/entities';
import { DomainError } from '../../domain/errors/domain-error';
import { readEntity, type KeyedRow, type ReadBudget } from '../../db/query/entity-reader';
import type { ReadDb } from '../../db/query/read-timeout';
import type { Answer } from '../../domain/responses/answer';

/**
 * MAX_RESPONSE_BYTES for a whole `$batch` response (DESIGN §12, §13): each read of the batch (a GET,
 * a representation) may use what the earlier answers left, checked in Postgres as for a lone read.
 * Budgets are whole multiples of QUANTUM, so the statements' texts repeat (they carry the limit).
 */

const QUANTUM = 64 * 1024;

export class ResponseBudget {
  constructor(private left: number) {}

  /** The budget of the next read: what is left (at least one quantum, so the limit is approximate by that much). */
  next(): ReadBudget {
    return { maxResponseBytes: Math.max(QUANTUM, Math.floor(this.left / QUANTUM) * QUANTUM) };
  }

  /** A budget to spend tentatively (a transaction that may be rolled back and run again). */
  copy(): ResponseBudget {
    return new ResponseBudget(this.left);
  }

  spend(answer: Answer): void {
    if (answer.body !== undefined) this.left -= Buffer.byteLength(answer.body);
  }
}

/**
 * A written entity as a keyed GET shows it, for `Prefer: return=representation`, within the budget.
 * Past it the write's answer goes without the entity, and without `Preference-Applied`, which tells
 * the client the preference was not honoured: the write itself stands.
 */
export async function representation(
  db: ReadDb,
  entity: EntityDefinition,
  id: number,
  budget: ResponseBudget,
): Promise<KeyedRow | null> {
  try {
    return await readEntity(db, entity, id, budget.next());
  } catch (err) {
    if (err instanceof DomainError) return null;
    throw err;
  }
}
