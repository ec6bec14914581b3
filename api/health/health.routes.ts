import { Router } from 'express';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { problem, sendProblem } from '../http/problem';

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });
}

/** Liveness says the process answers; readiness says both stores answer too. No auth on either. */
export function healthRoutes(knex: Knex, redis: Redis): Router {
  const router = Router();
  router.get('/health/live', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/health/ready', async (req, res) => {
    const [pg, rd] = await Promise.allSettled([
      withTimeout(knex.raw('select 1'), CHECK_TIMEOUT_MS),
      withTimeout(redis.ping(), CHECK_TIMEOUT_MS),
    ]);
    const checks = {
      postgres: pg.status === 'fulfilled' ? 'ok' : 'down',
      redis: rd.status === 'fulfilled' ? 'ok' : 'down',
    };
    if (checks.postgres === 'ok' && checks.redis === 'ok') {
      res.json({ status: 'ready', checks });
      return;
    }
    req.log.warn({ checks }, 'not ready');
    const down = Object.entries(checks)
      .filter(([, v]) => v === 'down')
      .map(([k]) => k);
    sendProblem(res, problem(503, 'Service Unavailable', `Not ready: ${down.join(' and ')} not answering.`));
  });
  return router;
}
