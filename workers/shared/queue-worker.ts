import { Worker, type Processor, type WorkerOptions } from 'bullmq';

/**
 * A BullMQ Worker that knows whether a job of its own is running (`busy`), which is what its close
 * must wait for. Made by withBullConnection (infra/redis.ts), whose close ends the worker's Redis
 * connections once none is (infra/stuck-connection.ts: closeBounded): a plain Worker's close waits
 * without bound for a QUIT's answer and for its blocking connection's 'end', which a Redis that
 * stopped answering, or a connection waiting to reconnect, never gives. The process, or a test
 * stack, waiting on it would hang. Jobs whose completion could not be recorded then have their
 * locks lapse and run again as stalled, as after a crash (the command log keeps a command
 * exactly-once, DESIGN §6).
 */
export class QueueWorker extends Worker {
  private readonly processing: { count: number };

  constructor(name: string, processor: Processor, opts: WorkerOptions) {
    const processing = { count: 0 };
    const counted: Processor = async (job, token, signal) => {
      processing.count += 1;
      try {
        return await processor(job, token, signal);
      } finally {
        processing.count -= 1;
      }
    };
    // BullMQ makes an AbortController per job only for processors that take a signal (a third parameter).
    Object.defineProperty(counted, 'length', { value: processor.length });
    super(name, counted, opts);
    this.processing = processing;
  }

  /** Whether a job's processor is running. */
  get busy(): boolean {
    return this.processing.count > 0;
  }
}
