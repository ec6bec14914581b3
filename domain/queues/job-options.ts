/**
 * The options a job is added with, as plain data: BullMQ's `JobsOptions` takes them as they are,
 * and domain/ stays free of BullMQ. Every job kind's values live in job-registry.ts.
 */

/** How many finished jobs a queue keeps and for how long (seconds): whichever limit comes first. */
interface KeepJobs {
  age?: number;
  count: number;
}

/** The wait before a failed attempt runs again. */
interface JobBackoff {
  /** `webhook-schedule`: the worker's own strategy (WEBHOOK_RETRY_SCHEDULE; `delay` unused). */
  type: 'exponential' | 'fixed' | 'webhook-schedule';
  /** ms before the second attempt; doubled for each further one when exponential. */
  delay: number;
}

export interface JobOptions {
  /** Runs in all, the first included: a failure on the last one leaves the job failed. */
  attempts: number;
  backoff?: JobBackoff;
  /**
   * Finished jobs stay a while (for callers awaiting them, /Jobs and Bull Board). These job options
   * are the only retention there is: BullMQ applies a worker's own only to jobs added without any.
   */
  removeOnComplete: KeepJobs;
  removeOnFail: KeepJobs;
}

/** The options of one added job: its kind's, and the job id when the kind takes it from the data. */
export interface AddedJobOptions extends JobOptions {
  jobId?: string;
}
