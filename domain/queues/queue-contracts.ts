/**
 * Names of the queues the API and the workers meet on, and of the jobs that are neither a command
 * nor an event. What goes on each queue, with which options, is job-registry.ts; payload types live
 * beside the commands and events they carry (domain/commands, domain/events).
 */
export const QUEUE = {
  commands: 'commands',
  views: 'views',
  notifications: 'notifications',
  /** Housekeeping run by the command workers: the retention job (one scheduler for all processes). */
  maintenance: 'maintenance',
  /**
   * Outward webhook deliveries (DESIGN §16): one job per (event, subscription), added by the
   * notification workers after they record a burst, processed by a second worker in the same processes.
   */
  webhooks: 'webhooks',
} as const;

export type QueueName = (typeof QUEUE)[keyof typeof QUEUE];

export const ALL_QUEUES: readonly QueueName[] = Object.values(QUEUE);

/**
 * Job of the `views` queue that rebuilds every read model from the tables (`POST /Jobs/RebuildViews`);
 * its handler reports progress with `job.updateProgress`.
 */
export const REBUILD_VIEWS_JOB = 'rebuild-views';

/**
 * Job of the `views` and `notifications` queues carrying a burst of committed events (the relay
 * publishes one per burst per consumer queue; its data is `{ events }`, oldest first).
 */
export const EVENT_BURST_JOB = 'event-burst';

/** Job of the `commands` queue carrying a whole `$batch` (domain/batch/batch-command.ts). */
export const BATCH_JOB = 'batch';

/** Job (and job scheduler id) of the `maintenance` queue that prunes the outbox and the command log. */
export const PRUNE_RETENTION_JOB = 'prune-retention';

/** Job of the `webhooks` queue: one event POSTed to one subscription's URL (its data: WebhookDeliveryData). */
export const WEBHOOK_DELIVERY_JOB = 'webhook-delivery';

/** The custom backoff of webhook deliveries: the waits of WEBHOOK_RETRY_SCHEDULE, read by the worker. */
export const WEBHOOK_BACKOFF = 'webhook-schedule';

/**
 * What a command worker announces on the `command-replies` channel (infra/command-replies.ts) when
 * a job of the `commands` queue is done: its result (a command's is a few hundred bytes), that it
 * finished (a `$batch`, whose result the API reads from the job), or that it failed for good.
 */
export type CommandReply =
  { jobId: string; result: unknown } | { jobId: string; finished: true } | { jobId: string; failedReason: string };
