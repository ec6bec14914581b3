import type { Job } from 'bullmq';
import { isTraceContext } from '../../domain/commands/write-origin';
import { burstOrigins, type EventBurstData } from '../../domain/queues/job-registry';
import type { QueueName } from '../../domain/queues/queue-contracts';
import type { Logger } from '../../infra/logger';
import { tracing } from '../../infra/tracing/tracing';
import { requestFields, traceContexts } from './write-origins';

type BurstHandler<R> = (job: Job<EventBurstData>, logger: Logger) => Promise<R>;

/**
 * An event worker's handling of a burst in the context of the writes it carries: every line logged
 * about it names their request id (`requestId`, or `requestIds` when the burst holds several
 * writes' events), and with tracing on it runs in a span that follows the relay's publish (itself
 * in the first write's trace) and links the other writes' traces.
 */
export function inBurstContext<R>(queue: QueueName, logger: Logger, handle: BurstHandler<R>) {
  return async (job: Job<EventBurstData>): Promise<R> => {
    const origins = burstOrigins(job.data);
    const fields = requestFields(origins);
    const log = logger.child(fields);
    const traces = traceContexts(origins);
    const published = isTraceContext(job.data.trace) ? job.data.trace : undefined;
    const [parent, ...links] = published ? [published, ...traces] : traces;
    const attributes = {
      'messaging.system': 'bullmq',
      'messaging.destination.name': queue,
      'messaging.batch.message_count': job.data.events.length,
    };
    const span = { kind: 'consumer', parent, links, attributes, requestId: fields.requestId } as const;
    return tracing().inSpan('process event-burst', span, async () => {
      const result = await handle(job, log);
      log.debug({ jobId: job.id, events: job.data.events.length, result }, 'event burst applied');
      return result;
    });
  };
}
