import type { RequestHandler } from 'express';
import type { RedisClient } from '../../infra/redis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { tooLarge, tooManyRequests } from '../../domain/errors/domain-error';

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
   * Counts a `$batch` of `requests` as that many requests of `subject`, all at once and before any
   * is queued (the middleware counted the batch itself as its first). A batch that does not fit is
   * a 429 and costs nothing (its points are given back, so a smaller batch may still fit); one that
   * could never fit, more requests than the limit allows in a minute, is a 413.
   */
  chargeBatch(subject: string, requests: number): Promise<void>;
}

export function rateLimit(options: RateLimitOptions): RateLimit {
  if (options.perMinute <= 0) return { middleware: (_req, _res, next) => next(), chargeBatch: async () => {} };
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    points: options.perMinute,
    duration: 60,
    keyPrefix: `${options.prefix}:rate`,
    rejectIfRedisNotReady: true,
  });
  /**
   * Resolves when the points fit (or Redis cannot count: see above); rejects with the 429, after
   * giving the points back when `refund` says so.
   */
  const consume = (subject: string, points: number, refund = false) =>
    limiter.consume(subject, points).then(
      () => undefined,
      async (outcome: unknown) => {
        if (outcome instanceof RateLimiterRes) {
          if (refund) await limiter.reward(subject, points).catch(options.onStoreError);
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
    chargeBatch: async (subject, requests) => {
      if (requests > options.perMinute) {
        throw tooLarge(
          `The batch holds ${requests} requests and each counts toward RATE_LIMIT_PER_MINUTE, which allows ${options.perMinute} a minute: it could never run. Split it into batches of at most ${options.perMinute} requests.`,
        );
      }
      if (requests > 1) await consume(subject, requests - 1, true);
    },
  };
}
