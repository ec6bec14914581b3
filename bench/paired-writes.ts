import { Agent, request } from 'node:http';
import { decodeId } from '../domain/ids/id-codec';

/**
 * Two builds compared at one connection, paired (issue 28). At c=1 runs minutes apart differ by up
 * to 4× on this machine while a lever is worth a few percent, so one run of each build tells
 * nothing. Here both builds run at once (two stacks on one Postgres and one Redis, each with its
 * own PORT and QUEUE_PREFIX) and one client alternates requests between them, A B, B A, …: both
 * meet the same moments, and the median of the per-pair ratios B / A is the figure (bench/README.md).
 *
 *   node dist/bench/paired-writes.js --a http://127.0.0.1:3000 --b http://127.0.0.1:3001 \
 *     [--kind post|patch|get] [--pairs 1000] [--warmup 200]
 *
 * `--b-design` makes B the design floor (bench/design-floor-writes.ts, the queue floor server's
 * `/floor/design/…`) on A's database: the same writes, by database id (post and patch only).
 *
 * Mock auth on both (AUTH_MOCK=true). The ids it writes with are read from each side first.
 */

type Kind = 'post' | 'patch' | 'get';

interface Side {
  base: URL;
  /** The design floor's routes (database ids) instead of the service's. */
  design?: boolean;
  agent: Agent;
  addressId: string;
  buildingTypeId: string;
  schemeId: string;
}

function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
}

function send(side: Side, method: string, path: string, body?: string, type?: string) {
  return new Promise<{ ms: number; status: number; text: string }>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      new URL(path, side.base),
      {
        method,
        agent: side.agent,
        headers: body === undefined ? {} : { 'content-type': type!, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, status: res.statusCode ?? 0, text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function firstId(side: Side, entities: string): Promise<string> {
  const res = await send(side, 'GET', `/${entities}?$top=1&$orderby=Id`);
  const id = (JSON.parse(res.text) as { Id: string }[])[0]?.Id;
  if (res.status !== 200 || !id) throw new Error(`${side.base.origin}: no ${entities} to write with (${res.status})`);
  return id;
}

async function sideAt(base: string): Promise<Side> {
  const side = { base: new URL(base), agent: new Agent({ keepAlive: true, maxSockets: 1 }) } as Side;
  side.addressId = await firstId(side, 'Addresses');
  side.buildingTypeId = await firstId(side, 'BuildingTypes');
  side.schemeId = await firstId(side, 'Schemes');
  return side;
}

async function one(side: Side, kind: Kind, n: number): Promise<number> {
  const res = side.design
    ? await designWrite(side, kind, n)
    : kind === 'post'
      ? await send(
          side,
          'POST',
          '/Schemes',
          JSON.stringify({
            SchemeName: `Paired ${n}`,
            Address: { Id: side.addressId },
            BuildingType: { Id: side.buildingTypeId },
          }),
          'application/json',
        )
      : kind === 'patch'
        ? await send(
            side,
            'PATCH',
            `/Schemes/${side.schemeId}`,
            JSON.stringify([{ op: 'replace', path: '/SchemeName', value: `Paired ${n}` }]),
            'application/json-patch+json',
          )
        : await send(side, 'GET', `/Schemes/${side.schemeId}`);
  if (res.status >= 300) throw new Error(`${side.base.origin}: ${kind} answered ${res.status}: ${res.text}`);
  return res.ms;
}

/** The same write to the design floor: by database id, the scheme A patches. */
function designWrite(side: Side, kind: Kind, n: number) {
  if (kind === 'get') throw new Error('--b-design compares writes: --kind post or patch');
  return kind === 'post'
    ? send(side, 'POST', '/floor/design/schemes', JSON.stringify({ SchemeName: `Paired ${n}` }), 'application/json')
    : send(
        side,
        'PATCH',
        `/floor/design/schemes/${decodeId('Scheme', side.schemeId)}`,
        JSON.stringify([{ op: 'replace', path: '/SchemeName', value: `Paired ${n}` }]),
        'application/json-patch+json',
      );
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(q * (sorted.length - 1))]!;
};
const mean = (values: number[]) => values.reduce((x, y) => x + y, 0) / values.length;
const summary = (ms: number[]) =>
  `mean ${mean(ms).toFixed(2)} p50 ${quantile(ms, 0.5).toFixed(2)} p90 ${quantile(ms, 0.9).toFixed(2)} p99 ${quantile(ms, 0.99).toFixed(2)} ms`;

async function main(): Promise<void> {
  const kind = argument('kind', 'post') as Kind;
  if (!['post', 'patch', 'get'].includes(kind)) throw new Error(`--kind post|patch|get, not ${kind}`);
  const pairs = Number(argument('pairs', '1000'));
  const warmup = Number(argument('warmup', '200'));
  const a = await sideAt(argument('a', 'http://127.0.0.1:3000'));
  const design = process.argv.includes('--b-design');
  const b = design
    ? {
        ...a,
        base: new URL(argument('b', 'http://127.0.0.1:3912')),
        agent: new Agent({ keepAlive: true, maxSockets: 1 }),
        design,
      }
    : await sideAt(argument('b', 'http://127.0.0.1:3001'));
  const sides = [a, b];
  const latencies: [number[], number[]] = [[], []];
  const ratios: number[] = [];
  for (let n = 0; n < warmup + pairs; n++) {
    // Each side goes first in every other pair, so neither always meets what the other left behind.
    const order = n % 2 ? [1, 0] : [0, 1];
    const pair: number[] = [];
    for (const i of order) pair[i] = await one(sides[i]!, kind, n);
    if (n < warmup) continue;
    latencies[0].push(pair[0]!);
    latencies[1].push(pair[1]!);
    ratios.push(pair[1]! / pair[0]!);
  }
  process.stdout.write(
    `${kind} c=1, ${pairs} pairs\n  A ${sides[0]!.base.origin}: ${summary(latencies[0])}\n` +
      `  B ${sides[1]!.base.origin}: ${summary(latencies[1])}\n` +
      `  B / A: median of pairs ${quantile(ratios, 0.5).toFixed(3)}, of means ${(mean(latencies[1]) / mean(latencies[0])).toFixed(3)}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
