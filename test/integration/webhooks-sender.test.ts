import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { RESPONSE_CAP_BYTES, sendWebhook } from '../../infra/webhooks/webhook-sender';

/**
 * The webhook HTTP exchange against real local servers: a 2xx is a delivery even when its body
 * never ends, a receiver's answer is read only up to RESPONSE_CAP_BYTES, a refused address sends
 * nothing, and a closed port is a failed attempt with its reason.
 */

async function serve(handler: RequestListener): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const send = (url: string, allowPrivate = true) =>
  sendWebhook({ url, headers: { 'webhook-id': 'x' }, body: '{"a":1}', timeoutMs: 3000, allowPrivate });

test('a 2xx is delivered at once, even with a body that never ends', async (t) => {
  let answer: ServerResponse | undefined;
  const server = await serve((_req, res) => {
    answer = res;
    res.writeHead(200);
    res.write('streaming…'); // and never ends
  });
  t.teardown(() => server.close());
  const outcome = await send(server.url);
  t.like(outcome, { delivered: true, statusCode: 200, error: null });
  // Delivered while the receiver is still sending: the sender did not wait for the body (nor for
  // its timeout, which would have cut the connection first).
  t.false(answer!.writableEnded);
  t.false(answer!.destroyed);
});

test("a failure's answer is read up to the cap, its excerpt in the reason", async (t) => {
  let written = 0;
  const server = await serve((_req, res) => {
    res.writeHead(500);
    const chunk = Buffer.alloc(64 * 1024, 'e');
    // Far more than the cap; the sender stops reading and drops the connection.
    const pump = () => {
      while (written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
      if (written < 64 * 1024 * 1024 && !res.destroyed) res.once('drain', pump);
    };
    res.on('close', () => (written = Infinity));
    pump();
  });
  t.teardown(() => server.close());
  const outcome = await send(server.url);
  t.false(outcome.delivered);
  t.is(outcome.statusCode, 500);
  t.regex(outcome.error ?? '', /^HTTP 500: e{200}…$/);
  t.true(RESPONSE_CAP_BYTES <= 4096);
});

test('refused addresses and closed ports are failed attempts; nothing reaches a refused target', async (t) => {
  const server = await serve((_req, res) => res.writeHead(204).end());
  t.teardown(() => server.close());
  const refused = await send(server.url, false);
  t.like(refused, { delivered: false, statusCode: null });
  t.regex(refused.error ?? '', /^refused: 127\.0\.0\.1, a loopback address/);
  const byName = await send(server.url.replace('127.0.0.1', 'localhost'), false);
  t.regex(byName.error ?? '', /^refused: localhost resolves to/);
  t.is(server.hits(), 0);
  const port = new URL(server.url).port;
  await server.close();
  const closed = await send(`http://127.0.0.1:${port}/hook`);
  t.like(closed, { delivered: false, statusCode: null });
  t.regex(closed.error ?? '', /^ECONNREFUSED/);
});
