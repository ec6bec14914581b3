import type { Job, JobState } from 'bullmq';
import type { Queue } from 'bullmq';
import { jobEntry, lastActivity, type JobEntry } from './job-entry';

/** States /Jobs lists and filters by (BullMQ's own names). */
export const JOB_STATES: readonly JobState[] = [
  'active',
  'waiting',
  'waiting-children',
  'prioritized',
  'delayed',
  'failed',
  'completed',
];

export function isJobState(value: string): value is JobState {
  return (JOB_STATES as readonly string[]).includes(value);
}

export interface JobListing {
  queues: Queue[];
  states: readonly JobState[];
  top: number;
  skip: number;
}

/** Newest change first; queue and id (numeric-aware, newer ids are larger) make the order total. */
function byRecency(a: { job: Job }, b: { job: Job }): number {
  return (
    lastActivity(b.job) - lastActivity(a.job) ||
    a.job.queueName.localeCompare(b.job.queueName) ||
    String(b.job.id).localeCompare(String(a.job.id), 'en', { numeric: true })
  );
}

/**
 * One page of the most recently changed jobs across the given queues and states. BullMQ keeps each
 * state as its own list, newest first, so the page is found among the first `skip + top` jobs of
 * every list; the caller bounds that window.
 */
export async function listJobs(listing: JobListing): Promise<JobEntry[]> {
  const window = listing.skip + listing.top;
  if (window === 0) return [];
  const lists = await Promise.all(
    listing.queues.flatMap((queue) =>
      listing.states.map(async (state) => {
        const jobs = await queue.getJobs([state], 0, window - 1, false);
        return jobs.filter((job): job is Job => Boolean(job)).map((job) => ({ job, state }));
      }),
    ),
  );
  const seen = new Set<string>();
  return lists
    .flat()
    .sort(byRecency)
    .filter(({ job }) => {
      // A job that moved between two list reads shows up twice: keep its newer state.
      const key = `${job.queueName}/${job.id}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(listing.skip, window)
    .map(({ job, state }) => jobEntry(job, state));
}

export async function countJobs(listing: Pick<JobListing, 'queues' | 'states'>): Promise<number> {
  const counts = await Promise.all(listing.queues.map((queue) => queue.getJobCounts(...listing.states)));
  return counts.reduce((sum, byState) => sum + Object.values(byState).reduce((a, n) => a + n, 0), 0);
}
