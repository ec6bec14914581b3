import { UnrecoverableError } from 'bullmq';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { Logger } from '../../infra/logger';

/**
 * Whether a failure is the data's rather than the infrastructure's: a value Postgres refuses
 * (SQLSTATE classes 22 and 23) or one the handler's own code cannot take (a TypeError). Retrying
 * cannot cure it; anything else (a lost connection, a deadlock) is retried by BullMQ.
 */
function isDataFailure(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return err instanceof TypeError || (typeof code === 'string' && /^2[23]/.test(code));
}

/**
 * Applies a burst of events set-based; when the burst is refused for its data, applies its events
 * one by one, so one malformed event (a row written into the outbox by hand, a job added by hand)
 * does not hold back the others. The events that fail on their own are logged and fail the job
 * without retry, naming them, so they stay visible in /Jobs and Bull Board; a retry there applies
 * the rest again harmlessly (every consumer is idempotent per event). `applyAlone`, when given, is
 * tried for an event that `apply` refused on its own: the activity log records it without first
 * recording its entity's earlier events, one of which may be the malformed one.
 */
export async function applyBurst(
  events: readonly DomainEvent[],
  apply: (events: readonly DomainEvent[]) => Promise<number>,
  logger: Logger,
  applyAlone?: (events: readonly DomainEvent[]) => Promise<number>,
): Promise<number> {
  try {
    return await apply(events);
  } catch (err) {
    if (!isDataFailure(err)) throw err;
  }
  // One event alone: `apply`, then `applyAlone` if that refused it for its data.
  const applyOne = async (event: DomainEvent): Promise<number> => {
    try {
      return await apply([event]);
    } catch (err) {
      if (!applyAlone || !isDataFailure(err)) throw err;
      return applyAlone([event]);
    }
  };
  let applied = 0;
  const refused: string[] = [];
  for (const event of events) {
    try {
      applied += await applyOne(event);
    } catch (err) {
      if (!isDataFailure(err)) throw err;
      refused.push(String(event?.eventId));
      logger.error({ eventId: event?.eventId, err: (err as Error).message }, 'event refused for its data: set aside');
    }
  }
  if (refused.length) {
    throw new UnrecoverableError(
      `${refused.length} of ${events.length} events could not be applied for their data (${refused.slice(0, 10).join(', ')}${refused.length > 10 ? ', …' : ''}); the others were`,
    );
  }
  return applied;
}
