import test from 'ava';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { sendText } from '../../api/http/send-answer';

// Bodies over 1 MiB (a page or a `$batch` answer of up to 32 MiB) are written a slice at a time so
// that encoding them never holds the event loop in one call; the client must get them whole.

async function served(text: string, type = 'application/json') {
  const app = express();
  app.all('/', (_req, res) => sendText(res.type(type), text));
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const get = await fetch(`http://127.0.0.1:${port}/`);
    const head = await fetch(`http://127.0.0.1:${port}/`, { method: 'HEAD' });
    return { get, body: await get.text(), head };
  } finally {
    server.close();
  }
}

test('a body of several slices arrives whole, a surrogate pair across a slice boundary included', async (t) => {
  const mib = 1024 * 1024;
  // An emoji at every slice boundary, and multi-byte text between them.
  const text = `"${'a'.repeat(mib - 2)}😀${'é'.repeat(mib)}😀${'z'.repeat(mib - 1)}😀"`;
  const { get, body, head } = await served(text);
  t.is(get.status, 200);
  t.is(get.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(body.length, text.length);
  t.true(body === text, 'every character arrives, none replaced');
  t.is(head.status, 200);
});

test('a small body is one write, with its length', async (t) => {
  const { get, body } = await served('{"value":"é"}');
  t.is(body, '{"value":"é"}');
  t.is(get.headers.get('content-length'), String(Buffer.byteLength('{"value":"é"}')));
});
