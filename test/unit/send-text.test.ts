import test from 'ava';
import express from 'express';
import { connect, type AddressInfo } from 'node:net';
import { JSON_TYPE, type Answer } from '../../api/http/answer';
import { sendAnswer, sendText } from '../../api/http/send-answer';

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

/** The raw head and body an app answers to one request, the Date header left out. */
async function rawAnswer(app: express.Express, method: string, headers: Record<string, string> = {}): Promise<string> {
  const server = app.listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const socket = connect(port, '127.0.0.1');
    const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(`${method} / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra.join('')}\r\n`);
    let raw = '';
    for await (const chunk of socket) raw += (chunk as Buffer).toString('utf8');
    return raw.replace(/\r\nDate: [^\r]*/, '');
  } finally {
    server.close();
  }
}

test("a JSON answer is written byte for byte as express's res.send wrote it, conditional requests and HEAD included", async (t) => {
  const answer: Answer = {
    status: 200,
    headers: { etag: '"7"', 'content-type': JSON_TYPE, 'x-total-count': '3' },
    body: `{"Name":"é ${'x'.repeat(1200)}"}`,
  };
  const viaSendAnswer = express().get('/', (_req, res) => sendAnswer(res, answer));
  // What sendAnswer did for every answer before it wrote plain JSON answers itself.
  const viaExpress = express().get('/', (_req, res) => {
    res.status(answer.status);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (name === 'content-type') res.type(value);
      else res.setHeader(name, value);
    }
    res.send(answer.body);
  });
  for (const app of [viaSendAnswer, viaExpress]) app.set('etag', false);
  for (const [method, headers] of [
    ['GET', {}],
    ['GET', { 'If-None-Match': '"7"' }],
    ['HEAD', {}],
  ] as const) {
    t.is(await rawAnswer(viaSendAnswer, method, headers), await rawAnswer(viaExpress, method, headers), method);
  }
});
