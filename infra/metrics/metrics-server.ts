import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger';

/** What a scrape answers: the Prometheus text and its content type. */
export interface Scrape {
  contentType: string;
  text: string;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A worker process's own metrics endpoint (METRICS_PORT): `GET /metrics` and nothing else, no
 * token (like the API's `/metrics`, it is for the operator's network). Closed with the process.
 */
export async function serveMetrics(options: {
  port: number;
  host: string;
  logger: Logger;
  scrape: () => Promise<Scrape>;
}): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('Method Not Allowed\n');
      return;
    }
    options.scrape().then(
      ({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(text),
      (err: unknown) => {
        options.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics scrape failed');
        res.writeHead(503, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port, host: options.host }, `metrics on http://${options.host}:${port}/metrics`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
