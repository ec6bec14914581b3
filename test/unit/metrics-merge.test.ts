import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge } from 'prom-client';
import { commandDuration, eventLag, httpRequestDuration, processRegistry } from '../../infra/metrics/registry';
import { mergeScrapes } from '../../infra/metrics/merge-scrapes';
import { scrapeWithPeers } from '../../infra/metrics/peer-scrapes';
import { serveMetrics } from '../../infra/metrics/metrics-server';
import { createLogger } from '../../infra/logger';
import { parsePrometheusText, sampleOf } from '../support/prometheus-text';

/**
 * One scrape of several processes (METRICS_PEERS, infra/metrics/merge-scrapes.ts): real
 * prom-client registries' text merged into one answer that a strict reader of the format accepts,
 * every sample labelled with its process kind; peers that fail are left out, never the scrape.
 */

const logger = createLogger('metrics-merge-test', 'silent');

/** What the API and a command worker serve: the same defaults, each its own series. */
async function twoProcesses() {
  const api = processRegistry();
  httpRequestDuration(api).observe({ method: 'POST', route: '/Companies', status: '201' }, 0.02);
  const commands = processRegistry();
  commandDuration(commands).observe({ command: 'create', entity: 'Company', outcome: 'ok' }, 0.01);
  commandDuration(commands).observe({ command: 'create', entity: 'Company', outcome: 'ok' }, 0.2);
  return { api: await api.metrics(), commands: await commands.metrics() };
}

test('two processes’ text cannot be concatenated: the strict reader refuses a family served twice', async (t) => {
  const { api, commands } = await twoProcesses();
  t.notThrows(() => parsePrometheusText(api));
  t.throws(() => parsePrometheusText(`${api}\n${commands}`), {
    message: /family process_cpu_user_seconds_total is not grouped together/,
  });
});

test('merged, each family is served once and every sample names its process', async (t) => {
  const { api, commands } = await twoProcesses();
  const families = parsePrometheusText(
    mergeScrapes([
      { process: 'api', text: api },
      { process: 'commands', text: commands },
    ]),
  );
  const labels = { command: 'create', entity: 'Company', outcome: 'ok' };
  t.is(sampleOf(families, 'emapi_command_duration_seconds_count', { process: 'commands', ...labels }), 2);
  t.is(sampleOf(families, 'emapi_command_duration_seconds_bucket', { process: 'commands', le: '0.01' }), 1);
  t.is(sampleOf(families, 'http_request_duration_seconds_count', { process: 'api', route: '/Companies' }), 1);
  t.is(families.get('emapi_command_duration_seconds')?.type, 'histogram');
  for (const process of ['api', 'commands']) {
    t.not(sampleOf(families, 'process_cpu_user_seconds_total', { process }), undefined, process);
  }
  for (const family of families.values()) {
    for (const sample of family.samples) t.true(['api', 'commands'].includes(sample.labels.process!), sample.name);
  }
});

test('a sample without labels gains one; a family another process types differently is left out', async (t) => {
  const one = processRegistry();
  new Counter({ name: 'shared_total', help: 'a counter here', registers: [one] }).inc(3);
  const other = processRegistry();
  new Gauge({ name: 'shared_total', help: 'a gauge there', registers: [other] }).set(7);
  eventLag(other).observe({ queue: 'views' }, 0.5);
  const text = mergeScrapes([
    { process: 'api', text: await one.metrics() },
    { process: 'views', text: await other.metrics() },
  ]);
  const families = parsePrometheusText(text);
  t.deepEqual(families.get('shared_total')?.samples, [{ name: 'shared_total', labels: { process: 'api' }, value: 3 }]);
  t.regex(text, /^# shared_total of process views left out: TYPE shared_total gauge, not TYPE shared_total counter$/m);
  t.is(sampleOf(families, 'emapi_event_lag_seconds_count', { process: 'views', queue: 'views' }), 1);
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
}

test('peers that are down, hung or failing are left out with emapi_metrics_peer_up 0; the scrape answers', async (t) => {
  const { api } = await twoProcesses();
  const worker = processRegistry();
  commandDuration(worker).observe({ command: 'patch', entity: 'Scheme', outcome: 'NotFound' }, 0.01);
  const live = await serveMetrics({
    port: 0,
    host: '127.0.0.1',
    logger,
    scrape: async () => ({ contentType: worker.contentType, text: await worker.metrics() }),
  });
  const hung = createServer(() => undefined); // takes the request, never answers
  const failing = createServer((_req, res) => res.writeHead(503).end('metrics unavailable\n'));
  const closed = createServer();
  const closedUrl = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  t.teardown(async () => {
    await live.close();
    hung.closeAllConnections();
    for (const server of [hung, failing]) await new Promise((resolve) => server.close(resolve));
  });
  const peers = [
    { process: 'commands', url: `http://127.0.0.1:${live.port}/metrics` },
    { process: 'views', url: await listen(hung) },
    { process: 'notifications', url: await listen(failing) },
    { process: 'other', url: closedUrl },
  ];
  // A hung peer costs the scrape this long; the live one, on a loaded machine, must fit in it.
  const scrape = scrapeWithPeers(
    async () => ({ contentType: 'text/plain; version=0.0.4', text: api }),
    peers,
    logger,
    5_000,
  );
  const answer = await scrape();
  t.is(answer.contentType, 'text/plain; version=0.0.4');
  const families = parsePrometheusText(answer.text);
  t.is(sampleOf(families, 'emapi_command_duration_seconds_count', { process: 'commands', outcome: 'NotFound' }), 1);
  t.is(sampleOf(families, 'http_request_duration_seconds_count', { process: 'api' }), 1);
  const up = Object.fromEntries(
    families.get('emapi_metrics_peer_up')!.samples.map((sample) => [sample.labels.process, sample.value]),
  );
  t.deepEqual(up, { commands: 1, views: 0, notifications: 0, other: 0 });
  t.is(sampleOf(families, 'process_cpu_user_seconds_total', { process: 'views' }), undefined);
});
