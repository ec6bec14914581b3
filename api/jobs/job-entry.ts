import type { Job, JobState } from 'bullmq';

/** A job as /Jobs shows it (DESIGN §10). Times are ISO 8601 UTC or null. */
export interface JobEntry {
  Queue: string;
  Id: string;
  Name: string;
  State: JobState | 'unknown';
  Attempts: number;
  Progress: unknown;
  CreatedAt: string | null;
  ProcessedAt: string | null;
  FinishedAt: string | null;
  FailedReason: string | null;
}

function iso(ms: number | undefined): string | null {
  return typeof ms === 'number' && ms > 0 ? new Date(ms).toISOString() : null;
}

export function jobEntry(job: Job, state: JobState | 'unknown'): JobEntry {
  return {
    Queue: job.queueName,
    Id: String(job.id),
    Name: job.name,
    State: state,
    // attemptsMade counts finished attempts; the running one is added. Not attemptsStarted: a webhook
    // delivery put back because its subscription's lane was full is started but no attempt.
    Attempts: (job.attemptsMade ?? 0) + (state === 'active' ? 1 : 0),
    Progress: job.progress ?? 0,
    CreatedAt: iso(job.timestamp),
    ProcessedAt: iso(job.processedOn),
    FinishedAt: iso(job.finishedOn),
    FailedReason: job.failedReason || null,
  };
}

/** Time of a job's latest change: what "recent" means in a listing. */
export function lastActivity(job: Job): number {
  return job.finishedOn ?? job.processedOn ?? job.timestamp ?? 0;
}
