import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { tooManyRequests } from '../../domain/errors/domain-error';

export interface RateLimitOptions {
  redis: Redis;
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
export function rateLimit(options: RateLimitOptions): RequestHandler {
  if (options.perMinute <= 0) return (_req, _res, next) => next();
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    points: options.perMinute,
    duration: 60,
    keyPrefix: `${options.prefix}:rate`,
    rejectIfRedisNotReady: true,
  });
  return (req, res, next) => {
    const subject = req.caller?.subject;
    if (!subject) return next();
    limiter.consume(subject).then(
      () => next(),
      (outcome: unknown) => {
        if (outcome instanceof RateLimiterRes) {
          const seconds = Math.max(1, Math.ceil(outcome.msBeforeNext / 1000));
          next(
            tooManyRequests(
              `Rate limit exceeded: more than ${options.perMinute} requests a minute (RATE_LIMIT_PER_MINUTE); try again in ${seconds} s.`,
              seconds,
            ),
          );
          return;
        }
        options.onStoreError(outcome);
        next();
      },
    );
  };
}
