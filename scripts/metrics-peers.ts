import { createServer } from 'node:net';
import type { ProcessKind } from './process-commands';

/**
 * Metrics under `npm start`: every process runs on one host, so the workers cannot all take one
 * METRICS_PORT as each docker-compose container does. Each worker gets a free loopback port of its
 * own (kept across its restarts), and the API is told where they are (METRICS_PEERS), so one scrape
 * of the API's `/metrics` shows every process, labelled by kind (infra/metrics/peer-scrapes.ts).
 */

/** envalid's true spellings (infra/config/environment.ts reads METRICS_ENABLED with `bool`). */
const TRUE = new Set(['true', 't', 'yes', 'on', '1']);

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What each process kind adds to its environment; nothing when METRICS_ENABLED is not on. */
export async function metricsEnvironments(
  kinds: ProcessKind[],
  env: NodeJS.ProcessEnv,
): Promise<Map<ProcessKind, NodeJS.ProcessEnv>> {
  const added = new Map<ProcessKind, NodeJS.ProcessEnv>(kinds.map((kind) => [kind, {}]));
  if (!TRUE.has(env.METRICS_ENABLED ?? '') || !kinds.includes('api')) return added;
  const peers: string[] = [];
  for (const kind of kinds) {
    if (kind === 'api') continue;
    const port = await freeLoopbackPort();
    // LISTEN_HOST only places a worker's metrics port: loopback, where only the API reads it.
    added.set(kind, { METRICS_PORT: String(port), LISTEN_HOST: '127.0.0.1' });
    peers.push(`${kind}=http://127.0.0.1:${port}/metrics`);
  }
  added.set('api', { METRICS_PEERS: peers.join(',') });
  return added;
}
