import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { RedisClient } from '../../infra/redis';
import { unavailable } from '../../domain/errors/domain-error';
import type { ReplicaSet } from '../../db/replicas/replica-set';
import { withinTime } from '../../infra/time-limit';

const CHECK_TIMEOUT_MS = 2000;

type Readiness = { postgres: 'ok' | 'down'; redis: 'ok' | 'down' };

/** How long one readiness answer is reused: a probe storm costs the stores one check a second. */
export const READINESS_CACHE_MS = 1000;

/**
 * Liveness says the process answers; readiness says both stores answer too, and shows each
 * replica's state and lag (DESIGN §14). No auth on either. `now` is the clock of the readiness cache.
 */
export function healthHandlers(
  knex: Knex,
  redis: RedisClient,
  replicas?: ReplicaSet,
  now: () => number = Date.now,
): { healthLive: RequestHandler; healthReady: RequestHandler } {
  let cached: { at: number; checks: Promise<Readiness> } | undefined;
  const readiness = (): Promise<Readiness> => {
    const at = now();
    if (cached && at - cached.at < READINESS_CACHE_MS) return cached.checks;
    const checks = Promise.allSettled([
      withinTime(knex.raw('select 1'), CHECK_TIMEOUT_MS, 'the Postgres check'),
      withinTime(redis.ping(), CHECK_TIMEOUT_MS, 'the Redis check'),
    ]).then(([pg, rd]): Readiness => ({
      postgres: pg.status === 'fulfilled' ? 'ok' : 'down',
      redis: rd.status === 'fulfilled' ? 'ok' : 'down',
    }));
    cached = { at, checks };
    return checks;
  };
  const healthLive: RequestHandler = (_req, res) => {
    res.json({ status: 'ok' });
  };
  const healthReady: RequestHandler = async (req, res) => {
    const checks = await readiness();
    if (checks.postgres === 'ok' && checks.redis === 'ok') {
      // Replicas are shown, never required: without them the primary serves every read.
      res.json({ status: 'ready', checks, ...(replicas ? { replicas: replicas.status() } : {}) });
      return;
    }
    req.log.warn({ checks }, 'not ready');
    const down = Object.entries(checks)
      .filter(([, v]) => v === 'down')
      .map(([k]) => k);
    throw unavailable(`Not ready: ${down.join(' and ')} not answering.`);
  };
  return { healthLive, healthReady };
}
