import type { MetricsPeer } from '../config/load-config';
import type { Logger } from '../logger';
import { mergeScrapes } from './merge-scrapes';
import type { Scrape } from './metrics-server';

/**
 * The API's `/metrics` with its peers' (METRICS_PEERS): under `npm start` the workers serve their
 * metrics on loopback ports only the API knows, so one scrape of the API must show every process.
 * Each peer is fetched at scrape time, beside the API's own, for at most PEER_TIMEOUT_MS; one that
 * does not answer is left out (`emapi_metrics_peer_up` 0) and never fails the scrape.
 */

/** Below Prometheus's default scrape timeout (10 s), so a hung peer never costs the whole scrape. */
const PEER_TIMEOUT_MS = 2_000;

const UP = 'emapi_metrics_peer_up';

async function fetchScrape(url: string, timeoutMs: number): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`answered ${res.status}`);
  }
  return res.text();
}

/** `own` merged with every peer's scrape; `api` labels the API's own samples. */
export function scrapeWithPeers(
  own: () => Promise<Scrape>,
  peers: MetricsPeer[],
  logger: Logger,
  timeoutMs = PEER_TIMEOUT_MS,
): () => Promise<Scrape> {
  // Logged when a peer stops or starts answering, not at every scrape.
  const wasUp = new Map<string, boolean>(peers.map((peer) => [peer.process, true]));
  return async () => {
    const [mine, ...theirs] = await Promise.all([
      own(),
      ...peers.map((peer) =>
        fetchScrape(peer.url, timeoutMs).then(
          (text) => ({ text }),
          (err: unknown) => ({ err: err instanceof Error ? err.message : String(err) }),
        ),
      ),
    ]);
    const up: string[] = [];
    const scrapes = [{ process: 'api', text: mine.text }];
    peers.forEach((peer, i) => {
      const answer = theirs[i]!;
      const answered = 'text' in answer;
      if (answered) scrapes.push({ process: peer.process, text: answer.text });
      if (wasUp.get(peer.process) !== answered) {
        if (answered) logger.info({ process: peer.process }, 'metrics peer answers again');
        else logger.warn({ process: peer.process, url: peer.url, err: answer.err }, 'metrics peer left out');
      }
      wasUp.set(peer.process, answered);
      up.push(`${UP}{process="${peer.process}"} ${answered ? 1 : 0}`);
    });
    const upFamily = [
      `# HELP ${UP} Whether the last scrape of each METRICS_PEERS process answered within ${timeoutMs} ms (0: its samples are missing from this scrape)`,
      `# TYPE ${UP} gauge`,
      ...up,
    ].join('\n');
    return { contentType: mine.contentType, text: `${mergeScrapes(scrapes)}\n${upFamily}\n` };
  };
}
