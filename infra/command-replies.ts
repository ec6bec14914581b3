import type { CommandReply } from '../domain/queues/queue-contracts';
import type { RedisClient } from './redis';

/**
 * How the API learns that a command it queued is done (issue 28): the command worker publishes a
 * CommandReply on the Redis pub/sub channel of the API process that queued it (the job's `replyTo`,
 * a route each process draws at start), so one message per job wakes that process alone, where
 * BullMQ's QueueEvents woke every process three times (the job's `added`, `active` and `completed`
 * entries of its events stream). A job without a route (queued by an API from before routes) is
 * answered on the deployment's shared channel, which every API process still hears. Pub/sub keeps
 * nothing: a process that was disconnected when a reply went out reads the job's state instead
 * (api/commands/command-bus.ts polls it).
 */

/** What a route may be: a process's random id (a UUID); anything else in a job means the shared channel. */
const ROUTE = /^[\w-]{1,64}$/;

/**
 * The channel of one API process's replies, or without a route the shared one (channels are not
 * keys: a Redis Cluster delivers them from any node to every subscriber).
 */
export function commandRepliesChannel(prefix: string, route?: string): string {
  return route === undefined ? `${prefix}:command-replies` : `${prefix}:command-replies:${route}`;
}

/** The route a job names for its reply (its `replyTo`), when it names a well-formed one. */
export function replyRouteOf(data: unknown): string | undefined {
  const route = (data as { replyTo?: unknown } | null)?.replyTo;
  return typeof route === 'string' && ROUTE.test(route) ? route : undefined;
}

/** Fire and forget: a reply lost is found by the API's poll of the job. */
export function publishReply(
  redis: RedisClient,
  prefix: string,
  reply: CommandReply,
  route?: string,
): Promise<unknown> {
  return redis.publish(commandRepliesChannel(prefix, route), JSON.stringify(reply));
}

/** A message of the channel, or null when it is not a reply (nothing else publishes there). */
export function parseReply(message: string): CommandReply | null {
  try {
    const reply = JSON.parse(message) as Partial<Record<string, unknown>> | null;
    if (!reply || typeof reply.jobId !== 'string') return null;
    if ('result' in reply || reply.finished === true || typeof reply.failedReason === 'string') {
      return reply as CommandReply;
    }
    return null;
  } catch {
    return null;
  }
}
