/** What AdaptiveConcurrency needs of a BullMQ Worker. */
export interface ConcurrentWorker {
  concurrency: number;
  on(event: 'drained', listener: () => void): unknown;
}

/**
 * A command worker's concurrency that follows its queue (issue 28). A BullMQ worker allowed more
 * than one job fetches again as soon as it takes one: with one command at a time that is a
 * `moveToActive` answering nothing, and its reply, in every command's path (lat-ab, PATCH pairs at
 * c=1: 3.4–5.4 % faster with a concurrency of 1). Group commit, though, needs every job that waits
 * at the same moment taken together. So the worker takes one job at a time while its queue drains
 * between jobs. A job that starts with no drain since the one before it was waiting: from then on
 * the worker takes up to `max`. BullMQ's `drained` event (a fetch found the queue empty) sets it back
 * to one; the jobs still running finish as they were.
 */
export class AdaptiveConcurrency {
  private startedSinceDrain = 0;
  private worker: ConcurrentWorker | undefined;

  constructor(private readonly max: number) {}

  /** Governs `worker` from now on (made after the handlers that report to jobStarted). */
  attach(worker: ConcurrentWorker): void {
    this.worker = worker;
    worker.concurrency = 1;
    worker.on('drained', () => {
      this.startedSinceDrain = 0;
      if (worker.concurrency !== 1) worker.concurrency = 1;
    });
  }

  /** Called as each job starts. */
  jobStarted(): void {
    this.startedSinceDrain += 1;
    if (this.worker && this.startedSinceDrain > 1 && this.worker.concurrency !== this.max) {
      this.worker.concurrency = this.max;
    }
  }
}
