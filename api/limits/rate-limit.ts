import type { RequestHandler } from 'express';
import type { RedisClient } from '../../infra/redis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { tooManyRequests } from '../../domain/errors/domain-error';

export interface RateLimitOptions {
  redis: RedisClient;
  /** Requests per subject per minute; 0 turns the limiter off. */
  perMinute: number;
  /** Key prefix: the deployment's queue prefix, so every API process of it shares one budget. */
  prefix: string;
  onStoreError(err: unknown): void;
}

/**
 * RATE_LIMIT_PER_MINUTE per subject across every API process (DESIGN §13), counted in Redis by
 * rate-limiter-flexible's atomic fixed window. Over the budget: 429 with Retry-After. When Redis
 * cannot count, the request goes on: reads are served by Postgres alone, and writes meet Redis
 * down as their own 503 anyway, so failing closed would only turn a Redis blip into a full outage.
 */
export interface RateLimit {
  /** Counts each request of a subject (the middleware, mounted after authentication). */
  middleware: RequestHandler;
  /**
   * Counts `points` more requests of `subject` at once: a `$batch` counts its GETs, each a read its
   * caller could have sent alone (DESIGN §12). Throws the 429 when they do not fit.
   */
  charge(subject: string, points: number): Promise<void>;
}

export function rateLimit(options: RateLimitOptions): RateLimit {
  if (options.perMinute <= 0) return { middleware: (_req, _res, next) => next(), charge: async () => {} };
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    points: options.perMinute,
    duration: 60,
    keyPrefix: `${options.prefix}:rate`,
    rejectIfRedisNotReady: true,
  });
  /** Resolves when the points fit (or Redis cannot count: see above); rejects with the 429. */
  const consume = (subject: string, points: number) =>
    limiter.consume(subject, points).then(
      () => undefined,
      (outcome: unknown) => {
        if (outcome instanceof RateLimiterRes) {
          const seconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
          throw tooManyRequests(
            `Rate limit exceeded: more than ${options.perMinute} requests a minute (RATE_LIMIT_PER_MINUTE); try again in ${seconds} s.`,
            seconds,
          );
        }
        options.onStoreError(outcome);
      },
    );
  return {
    middleware: (req, _res, next) => {
      const subject = req.caller?.subject;
      if (!subject) return next();
      consume(subject, 1).then(() => next(), next);
    },
    charge: (subject, points) => (points > 0 ? consume(subject, points) : Promise.resolve()),
  };
}
