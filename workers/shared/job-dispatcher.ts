import type { Job } from 'bullmq';
import { JOBS, jobKindOf, jobKindsOn, type JobKind, type JobKindOn } from '../../domain/queues/job-registry';
import type { QueueName } from '../../domain/queues/queue-contracts';
import type { Logger } from '../../infra/logger';
import { publicFailure } from './failure-reason';

/** Handles every job of one kind. */
type JobHandler = (job: Job, token?: string) => Promise<unknown>;

/** One handler per kind of job added to queue `Q` (domain/queues/job-registry.ts). */
export type JobHandlers<Q extends QueueName> = Record<JobKindOn<Q>, JobHandler>;

function describe(kind: JobKind): string {
  const names = JOBS[kind].names;
  return `${kind} (${names.slice(0, 3).join(', ')}${names.length > 3 ? `, … ${names.length} names` : ''})`;
}

/**
 * The one processor of a queue: it looks the job's name up in the job registry and runs the handler
 * of its kind. Built when the worker starts, and refused then if a kind of job producers add to the
 * queue has no handler (or a handler is for a kind the queue never carries): a name sent is a name
 * handled, found at start rather than job by job.
 */
export class JobDispatcher<Q extends QueueName> {
  private readonly handlers: ReadonlyMap<JobKind, JobHandler>;

  constructor(
    readonly queue: Q,
    handlers: JobHandlers<Q>,
    private readonly logger?: Logger,
  ) {
    const given = new Map(Object.entries(handlers) as [JobKind, JobHandler | undefined][]);
    const kinds = jobKindsOn(queue);
    const missing = kinds.filter((kind) => typeof given.get(kind) !== 'function');
    if (missing.length) throw new Error(`queue ${queue}: no handler for ${missing.map(describe).join('; ')}`);
    const stray = [...given.keys()].filter((kind) => !kinds.includes(kind));
    if (stray.length) throw new Error(`queue ${queue} carries no ${stray.join(', ')} jobs: handler(s) left unused`);
    this.handlers = given as Map<JobKind, JobHandler>;
  }

  /**
   * Runs the handler of the job's kind; a name no producer sends fails loudly, never dropped. A
   * failure of any kind of job is failed with a reason fit for /Jobs and Bull Board (no SQL, no
   * absolute path: ./failure-reason.ts); a withheld one is logged whole here, with the job's id.
   */
  readonly process = async (job: Job, token?: string): Promise<unknown> => {
    const kind = jobKindOf(this.queue, job.name);
    const handler = kind && this.handlers.get(kind);
    try {
      if (!handler) throw new Error(`no handler for job ${job.name} on queue ${this.queue}`);
      return await handler(job, token);
    } catch (err) {
      const failure = publicFailure(err, job.id);
      if (failure.withheld) {
        this.logger?.warn(
          {
            queue: this.queue,
            jobId: job.id,
            name: job.name,
            err: (err as Error).message,
            stack: (err as Error).stack,
          },
          'job failed: its reason is withheld from the job (it held SQL)',
        );
      }
      throw failure.error;
    }
  };
}
