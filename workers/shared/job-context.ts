import type { Job } from 'bullmq';
import { isTraceContext, isWriteOrigin } from '../../domain/commands/write-origin';
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

/**
 * The same for a job of one request (a `POST /Jobs/RebuildViews`): its lines name the request id
 * and, with tracing on, it runs in a span of the request's trace. Jobs of before, without an
 * origin, run as they did.
 */
export function inRequestContext<D extends { origin?: unknown }, R>(
  queue: QueueName,
  logger: Logger,
  handle: (job: Job<D>, logger: Logger) => Promise<R>,
) {
  return async (job: Job<D>): Promise<R> => {
    const origin = isWriteOrigin(job.data?.origin) ? job.data.origin : undefined;
    const log = logger.child(requestFields([origin]));
    const [parent] = traceContexts([origin]);
    const attributes = { 'messaging.system': 'bullmq', 'messaging.destination.name': queue };
    const span = { kind: 'consumer', parent, attributes, requestId: origin?.requestId } as const;
    return tracing().inSpan(`process ${job.name}`, span, async () => {
      const result = await handle(job, log);
      log.info({ jobId: job.id, result }, `${job.name} done`);
      return result;
    });
  };
}
