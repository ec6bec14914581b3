import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRedis } from '../../infra/redis';
import type { Stack } from './stack';

/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request it gets
 * (headers and raw body) and answers as the test says — a status, a redirect, or never (the
 * request is held open until the receiver closes).
 */

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * How to answer the n-th request (0-based): a status (with headers), `hang` to never answer, or a
 * promise of either (the request is held until the test settles it).
 */
type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';
export type Answer = Reply | Promise<Reply>;

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides each answer; 204 by default. */
  answer: (n: number, request: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => ({ status: 204 }),
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const n = receiver.received.length;
      receiver.received.push(request);
      held.push(res);
      void Promise.resolve(receiver.answer(n, request)).then((answer) => {
        if (answer === 'hang' || res.destroyed) return;
        res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = async () => {
    held.forEach((res) => res.destroy());
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}

/** Does any value under the stack's queue prefix in Redis contain `needle`? (every key type BullMQ uses) */
export async function redisHolds(stack: Stack, needle: string): Promise<boolean> {
  const redis = createRedis(stack.config.redis, 'worker');
  try {
    const keys = await redis.keys(`${stack.config.queuePrefix}*`);
    for (const key of keys) {
      const type = await redis.type(key);
      let values: unknown;
      if (type === 'hash') values = await redis.hgetall(key);
      else if (type === 'string') values = await redis.get(key);
      else if (type === 'list') values = await redis.lrange(key, 0, -1);
      else if (type === 'zset') values = await redis.zrange(key, 0, -1);
      else if (type === 'set') values = await redis.smembers(key);
      else if (type === 'stream') values = await redis.xrange(key, '-', '+');
      if (JSON.stringify(values ?? null).includes(needle)) return true;
    }
    return false;
  } finally {
    redis.disconnect();
  }
}

/** The receivers one test file starts, closed together in its `after.always` hook. */
export function receiverPool(): { start(): Promise<Receiver>; closeAll(): Promise<void> } {
  const started: Receiver[] = [];
  return {
    async start() {
      const receiver = await startReceiver();
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.allSettled(started.map((r) => r.close()));
    },
  };
}
