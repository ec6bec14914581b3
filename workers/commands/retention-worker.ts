import type { Knex } from 'knex';
import { COMMAND_LOG_RETENTION } from '../../db/commands/command-log';
import { OUTBOX_RETENTION } from '../../db/commands/outbox';
import { DELIVERY_RETENTION } from '../../db/webhooks/subscriptions';
import { pruneUntilDone } from '../../db/commands/retention';
import type { Logger } from '../../infra/logger';
import { openQueue } from '../../infra/queues';
import type { AppConfig } from '../../infra/config/load-config';
import { pruneRetentionSchedule } from '../../domain/queues/job-registry';
import { QUEUE } from '../../domain/queues/queue-contracts';
import { createQueueWorker } from '../shared/worker-process';

/**
 * Retention of the outbox, the command log and the webhook delivery attempts (DESIGN §13, §16). One BullMQ job scheduler (the same id
 * upserted by every command worker process) makes one `prune-retention` job per interval for the
 * whole deployment, whichever process takes it; each run deletes in batches until nothing older
 * than its window is left, so the tables hold about their windows however fast the service writes.
 */
export async function startRetentionWorker(
  config: AppConfig,
  knex: Knex,
  logger: Logger,
): Promise<{ close(): Promise<void> }> {
  const queue = openQueue(config, QUEUE.maintenance, { own: 'worker' }, (err) =>
    logger.debug({ queue: QUEUE.maintenance, err: err.message }, 'queue connection error'),
  );
  const schedule = pruneRetentionSchedule(config.retention.intervalMs);
  await queue.upsertJobScheduler(schedule.schedulerId, schedule.repeat, schedule.template);
  const budgetMs = Math.max(1000, Math.floor(config.retention.intervalMs / 2));
  const worker = createQueueWorker({
    queue: QUEUE.maintenance,
    redis: config.redis,
    queuePrefix: config.queuePrefix,
    concurrency: 1,
    logger,
    handlers: {
      pruneRetention: async () => {
        const outbox = await pruneUntilDone(knex, OUTBOX_RETENTION, config.retention.outboxMs, { budgetMs });
        const commandLog = await pruneUntilDone(knex, COMMAND_LOG_RETENTION, config.retention.commandLogMs, {
          budgetMs,
        });
        const deliveries = await pruneUntilDone(knex, DELIVERY_RETENTION, config.retention.deliveriesMs, { budgetMs });
        if (outbox.deleted || commandLog.deleted || deliveries.deleted) {
          logger.info({ outbox, commandLog, deliveries }, 'retention pruned');
        }
        return { outbox, commandLog, deliveries };
      },
    },
  });
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}
