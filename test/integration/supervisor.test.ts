import test from 'ava';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { createTestDatabase, uniqueQueuePrefix, type TestDatabase } from '../support/test-database';
import { eventually } from '../support/queues';
import { checkedFetch } from '../support/contract';
import { parsePrometheusText, sampleOf } from '../support/prometheus-text';

// What `npm start` runs after provisioning: the supervisor with the API and one process of each
// worker kind, as real child processes.
const root = path.resolve(__dirname, '../../..');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let db: TestDatabase;
test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

/** `npm start`'s supervisor on a free port, its output collected; `stop()` sends SIGTERM and awaits its exit code. */
async function startSupervisor(env: NodeJS.ProcessEnv = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(root, 'dist/scripts/supervisor.js')], {
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      QUEUE_PREFIX: uniqueQueuePrefix(),
      PORT: String(port),
      AUTH_MOCK: 'true',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
      // /health/ready says only that the API is up; the worker processes start beside it and, on a
      // loaded machine, may take a while longer: the first write must not give up (202) before then.
      COMMAND_TIMEOUT_MS: '30000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  await eventually(async () => (await checkedFetch(`${base}/health/ready`).catch(() => undefined))?.ok, 20_000).catch(
    (err: unknown) => {
      child.kill('SIGTERM');
      throw new Error(`${(err as Error).message}: ${output}`);
    },
  );
  return {
    port,
    base,
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

test('the supervisor serves, runs every worker kind, and stops them all on SIGTERM', async (t) => {
  const supervisor = await startSupervisor();
  const { base, port } = supervisor;
  try {
    t.regex(supervisor.output(), new RegExp(`http://localhost:${port}`));
    // A write answered 201 proves a command worker process runs; its activity, a notification one.
    const created = await checkedFetch(`${base}/Countries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'Italy', IsoCode: 'IT' }),
    });
    t.is(created.status, 201);
    const id = created.headers.get('location')!.split('/').pop()!;
    await eventually(async () => {
      const res = await checkedFetch(`${base}/Activities?$filter=${encodeURIComponent(`EntityId eq '${id}'`)}`);
      return ((await res.json()) as unknown[]).length === 1;
    }, 20_000);
    // …and a view worker process: the new country is searchable.
    await eventually(async () => {
      const res = await checkedFetch(`${base}/Countries?$search=italy`);
      return ((await res.json()) as unknown[]).length === 1;
    }, 20_000);
    // One process dying (as the API once did on a huge response) takes nothing else down: it is
    // started again and serves, and the workers never stopped.
    const apiPid = Number(/"component":"api","pid":(\d+)/.exec(supervisor.output())?.[1]);
    t.true(apiPid > 0, supervisor.output());
    process.kill(apiPid, 'SIGKILL');
    await eventually(
      async () => /api exited unexpectedly \(SIGKILL\); starting it again/.test(supervisor.output()),
      10_000,
    );
    await eventually(async () => (await checkedFetch(`${base}/health/ready`).catch(() => undefined))?.ok, 20_000);
    const after = await checkedFetch(`${base}/Countries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'Malta', IsoCode: 'MT' }),
    });
    t.is(after.status, 201);
  } finally {
    t.is(await supervisor.stop(), 0, supervisor.output());
  }
  t.regex(supervisor.output(), /all stopped/);
});

test('under npm start one scrape of the API’s /metrics shows every process, labelled by kind', async (t) => {
  // start.sh exports METRICS_ENABLED=true before it starts the supervisor.
  const supervisor = await startSupervisor({ METRICS_ENABLED: 'true' });
  const { base } = supervisor;
  try {
    const created = await checkedFetch(`${base}/Countries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'Iceland', IsoCode: 'IS' }),
    });
    t.is(created.status, 201);
    // One scrape after the write: the command worker's histogram is in it, under its process kind.
    const families = parsePrometheusText(await (await checkedFetch(`${base}/metrics`)).text());
    const create = { command: 'create', entity: 'Country', outcome: 'ok' };
    t.is(sampleOf(families, 'emapi_command_duration_seconds_count', { process: 'commands', ...create }), 1);
    t.is(families.get('emapi_command_duration_seconds')?.type, 'histogram');
    t.is(sampleOf(families, 'http_request_duration_seconds_count', { process: 'api', route: '/Countries' }), 1);
    for (const process of ['api', 'commands', 'views', 'notifications']) {
      t.not(sampleOf(families, 'process_cpu_user_seconds_total', { process }), undefined, process);
    }
    for (const process of ['commands', 'views', 'notifications']) {
      t.is(sampleOf(families, 'emapi_metrics_peer_up', { process }), 1, process);
    }
    // The event workers handle the write's event after it was answered: their lag shows up too.
    await eventually(async () => {
      const now = parsePrometheusText(await (await checkedFetch(`${base}/metrics`)).text());
      return ['views', 'notifications'].every(
        (queue) => (sampleOf(now, 'emapi_event_lag_seconds_count', { process: queue, queue }) ?? 0) >= 1,
      );
    }, 20_000);
    t.regex(supervisor.output(), /metrics of every process: \/metrics/, 'the supervisor says where they are');
  } finally {
    t.is(await supervisor.stop(), 0, supervisor.output());
  }
});
