import { JOBS } from '../domain/queues/job-registry';

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
