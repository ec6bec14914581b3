import { JOBS } from '../domain/queues/job-registry';
import { readVariables } from '../infra/config/environment';

/**
 * The queue of the bare round-trip floor: its own name and prefix (never the service's jobs), and
 * the command job's retention, so Redis keeps as much per job as it does for a command. No retries:
 * the floor's worker cannot fail.
 */
export const QUEUE_FLOOR = {
  name: 'floor-roundtrip',
  prefix: 'bench-floor',
  jobOptions: {
    removeOnComplete: JOBS.command.options.removeOnComplete,
    removeOnFail: JOBS.command.options.removeOnFail,
  },
} as const;

/** The fields a design-floor PATCH can change: the benchmarks' (a name, indexed; a count, not). */
export const PATCHABLE = { SchemeName: 'scheme_name', TotalUnits: 'total_units' } as const;
export type Patchable = keyof typeof PATCHABLE;

/** The subject the design floor's commands are admitted for. */
export const FLOOR_SUBJECT = 'bench-floor';

/**
 * DESIGN_FLOOR_FULL=1: the design floor with what the design adds to every write beyond its
 * transaction (issue 28): the admission of MAX_PENDING_COMMANDS_PER_SUBJECT before the job is
 * added, and the events delivered to the service's view and notification workers through its
 * OutboxPublisher (queue prefix DESIGN_FLOOR_QUEUE_PREFIX, default `bench`, and the service's
 * EVENT_PUBLISH_WINDOW_MS). Both settings are read as the service reads them. Null otherwise.
 */
export function fullDesignFloor(): { queuePrefix: string; publishWindowMs: number; maxPending: number } | null {
  if (process.env.DESIGN_FLOOR_FULL !== '1') return null;
  const settings = readVariables(['EVENT_PUBLISH_WINDOW_MS', 'MAX_PENDING_COMMANDS_PER_SUBJECT']);
  return {
    queuePrefix: process.env.DESIGN_FLOOR_QUEUE_PREFIX ?? 'bench',
    publishWindowMs: settings.EVENT_PUBLISH_WINDOW_MS,
    maxPending: settings.MAX_PENDING_COMMANDS_PER_SUBJECT,
  };
}
