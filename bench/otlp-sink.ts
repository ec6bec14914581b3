import { createServer } from 'node:http';

/**
 * A local OTLP/HTTP receiver for the tracing benchmark (bench/tracing-cost.ts): takes every export
 * (`POST /v1/traces`, protobuf or JSON), answers 200 and throws it away, so what the service spends
 * on tracing is measured without a collector's own cost. On SIGUSR2 it prints one JSON line: the
 * export requests and bytes it took.
 */

let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    if (req.method === 'POST') requests++;
    res.writeHead(200, { 'content-type': req.headers['content-type'] ?? 'application/json' }).end();
  });
});
server.listen(Number(process.env.PORT ?? 3906), '127.0.0.1');
process.on('SIGUSR2', () => process.stdout.write(`${JSON.stringify({ requests, bytes })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
