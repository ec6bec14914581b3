import type { CommandReply } from '../domain/queues/queue-contracts';
import type { RedisClient } from './redis';

/**
 * How the API learns that a command it queued is done (issue 28): the command worker publishes a
 * CommandReply on one Redis pub/sub channel per deployment, and every API process subscribes.
 * One message per job wakes each API process once, where BullMQ's QueueEvents woke it three times
 * (the job's `added`, `active` and `completed` entries of its events stream) and wrote its next
 * XREAD before the answer could go out. Pub/sub keeps nothing: a process that was disconnected
 * when a reply went out reads the job's state instead (api/commands/command-bus.ts polls it).
 */

/** The channel (not a key: a Redis Cluster delivers it from any node to every subscriber). */
export function commandRepliesChannel(prefix: string): string {
  return `${prefix}:command-replies`;
}

/** Fire and forget: a reply lost is found by the API's poll of the job. */
export function publishReply(redis: RedisClient, prefix: string, reply: CommandReply): Promise<unknown> {
  return redis.publish(commandRepliesChannel(prefix), JSON.stringify(reply));
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
