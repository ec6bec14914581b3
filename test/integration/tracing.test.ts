import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startStack, workerProcessEnv, type Stack } from '../support/stack';
import { eventually } from '../support/queues';

// Tracing (DESIGN §15) with real processes and real stores: the API, a command worker and both
// event workers as processes of their own, exporting to an OTLP/HTTP receiver this file runs. One
// POST is one trace across all of them, with the command's SQL inside its worker's span; the
// request id reaches every worker log line of the write; and with tracing off not one
// OpenTelemetry module is loaded.

const PRELOAD = path.resolve(__dirname, '../support/loaded-modules.js');
const MAINS = {
  api: path.resolve(__dirname, '../../api/main.js'),
  commands: path.resolve(__dirname, '../../workers/commands/main.js'),
  views: path.resolve(__dirname, '../../workers/views/main.js'),
  notifications: path.resolve(__dirname, '../../workers/notifications/main.js'),
};
type Kind = keyof typeof MAINS;
const READY: Record<Kind, string> = {
  api: 'API listening',
  commands: 'commands worker ready',
  views: 'views worker ready',
  notifications: 'notifications worker ready',
};

/** A span as the receiver keeps it: OTLP JSON's fields, with its resource's attributes. */
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
}

/** A Postgres statement's span (pg instrumentation; current semantic conventions). */
const isSql = (span: Span) => span.attributes['db.system.name'] === 'postgresql' && span.name.startsWith('pg.query');

type OtlpAttributes = { key: string; value: Record<string, unknown> }[] | undefined;

function attributesOf(list: OtlpAttributes): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));
}

/** An OTLP/HTTP receiver taking JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), as a collector would. */
async function otlpReceiver(): Promise<{ url: string; spans: Span[]; server: Server }> {
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        const request = JSON.parse(body) as {
          resourceSpans?: {
            resource?: { attributes?: OtlpAttributes };
            scopeSpans?: { spans?: (Omit<Span, 'attributes' | 'resource'> & { attributes?: OtlpAttributes })[] }[];
          }[];
        };
        for (const resourceSpans of request.resourceSpans ?? []) {
          const resource = attributesOf(resourceSpans.resource?.attributes);
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                ...span,
                links: span.links ?? [],
                attributes: attributesOf(span.attributes),
                resource,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

interface Running {
  kind: Kind;
  child: ChildProcess;
  /** Every stdout line so far, parsed (pino's JSON lines and the preload's reports). */
  lines(): Record<string, unknown>[];
}

function spawnKind(kind: Kind, env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, ['--require', PRELOAD, MAINS[kind]], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const lines = () =>
    out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  Object.defineProperty(child, 'describe', { value: () => `${kind}: ${out}${err}` });
  return { kind, child, lines };
}

async function ready(running: Running): Promise<void> {
  await eventually(async () => {
    if (running.child.exitCode !== null) {
      throw new Error(`${running.kind} exited: ${(running.child as unknown as { describe(): string }).describe()}`);
    }
    return running.lines().some((line) => String(line.msg).includes(READY[running.kind]));
  }, 30_000);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface Report {
  /** OpenTelemetry modules loaded, the API package aside (prom-client requires it for exemplars). */
  otelModules: number;
  /** Whether an OpenTelemetry API global (tracer provider, propagator, context manager) is registered. */
  otelGlobals: string[];
  requirePatched: boolean;
}

/** What the preload reports of the process's modules when signalled. */
async function loadedModules(running: Running): Promise<Report> {
  const before = running.lines().filter((line) => line.loadedModules).length;
  running.child.kill('SIGUSR2');
  const reports = await eventually(async () => {
    const found = running.lines().filter((line) => line.loadedModules);
    return found.length > before && found;
  });
  return reports.at(-1) as unknown as Report;
}

/** The four processes against `stack`, with `extra` environment; the API's base URL. */
async function startProcesses(stack: Stack, extra: Record<string, string>) {
  const base = workerProcessEnv(stack, { LOG_LEVEL: 'debug', ...extra });
  const processes = (Object.keys(MAINS) as Kind[]).map((kind) =>
    spawnKind(kind, kind === 'api' ? { ...base, AUTH_MOCK: 'true', PORT: '0', LISTEN_HOST: '127.0.0.1' } : base),
  );
  await Promise.all(processes.map(ready));
  const api = processes.find((running) => running.kind === 'api')!;
  const port = api.lines().find((line) => String(line.msg).includes(READY.api))!.port as number;
  return { processes, baseUrl: `http://127.0.0.1:${port}` };
}

async function post(baseUrl: string, requestId: string, name: string): Promise<string> {
  const res = await fetch(`${baseUrl}/Companies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ Name: name }),
  });
  if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${await res.text()}`);
  return res.headers.get('location')!;
}

let stack: Stack;
test.before(async () => {
  // The stack gives the database and the queue prefix; its in-process API is not used and no
  // worker runs in this process: every command and event is taken by the processes spawned here.
  stack = await startStack({ workers: [] });
});
test.after.always(async () => {
  await stack?.close();
});

test.serial(
  'one POST is one trace across the API, the command worker (with its SQL) and both event workers',
  async (t) => {
    const receiver = await otlpReceiver();
    t.teardown(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));
    const { processes, baseUrl } = await startProcesses(stack, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    t.teardown(() => Promise.all(processes.map((running) => stop(running.child))));
    const logged = new Map(processes.map((running) => [running, running.lines().length]));

    const requestId = `trace-${randomUUID()}`;
    await post(baseUrl, requestId, 'Traced Holdings');

    // The request's own span: the API's server span of the POST.
    const server = await eventually(async () =>
      receiver.spans.find(
        (span) => span.resource['service.name'] === 'emapi-api' && span.kind === 2 && /POST/.test(span.name),
      ),
    );
    t.is(server.attributes['emapi.request_id'], requestId, 'the request span names its request id');
    const inTrace = () => receiver.spans.filter((span) => span.traceId === server.traceId);
    const of = (service: string) => inTrace().filter((span) => span.resource['service.name'] === service);
    // Wait for both event workers' spans: the last of the write's pipeline.
    await eventually(
      async () =>
        of('emapi-views').some((span) => span.name === 'process event-burst') &&
        of('emapi-notifications').some((span) => span.name === 'process event-burst') &&
        of('emapi-commands').some((span) => span.name === 'publish event-burst'),
      20_000,
    );

    const services = new Set(inTrace().map((span) => span.resource['service.name']));
    t.deepEqual([...services].sort(), ['emapi-api', 'emapi-commands', 'emapi-notifications', 'emapi-views']);
    const pids = new Set(inTrace().map((span) => span.resource['process.pid']));
    t.true(pids.size >= 4, `spans from ${pids.size} processes`);
    t.deepEqual([...pids].sort(), processes.map((running) => running.child.pid).sort());

    // The command worker's span continues the API's, and the SQL of the command runs inside it.
    const byId = new Map(inTrace().map((span) => [span.spanId, span]));
    const command = of('emapi-commands').find((span) => span.name === 'process create');
    t.truthy(command, 'the command worker span');
    t.is(command!.attributes['emapi.request_id'], requestId);
    t.is(byId.get(command!.parentSpanId!)?.resource['service.name'], 'emapi-api', 'its parent is a span of the API');
    const within = (span: Span, ancestor: Span): boolean => {
      for (let at: Span | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) {
        if (at.spanId === ancestor.spanId) return true;
      }
      return false;
    };
    const sql = of('emapi-commands').filter(isSql);
    const sqlOfCommand = sql.filter((span) => within(span, command!));
    t.true(sqlOfCommand.length >= 2, `SQL spans within the command: ${sqlOfCommand.map((s) => s.name).join(', ')}`);
    t.true(
      sqlOfCommand.some((span) => /insert into command_log/i.test(String(span.attributes['db.query.text']))),
      'the command log and outbox insert among them',
    );

    // The relay's publish and the event workers' spans hang off the same trace.
    const publish = of('emapi-commands').find((span) => span.name === 'publish event-burst')!;
    for (const service of ['emapi-views', 'emapi-notifications']) {
      const burst = of(service).find((span) => span.name === 'process event-burst')!;
      t.is(burst.parentSpanId, publish.spanId, `${service} follows the relay's publish`);
      t.true(
        of(service).some((span) => isSql(span) && within(span, burst)),
        `${service}'s SQL within its span`,
      );
    }

    // The request id is in every line the workers wrote about the write, and each wrote some.
    for (const running of processes.filter((r) => r.kind !== 'api')) {
      const lines = running
        .lines()
        .slice(logged.get(running))
        .filter((line) => !line.loadedModules);
      t.true(lines.length > 0, `${running.kind} logged the write`);
      for (const line of lines) t.is(line.requestId, requestId, `${running.kind}: ${JSON.stringify(line)}`);
    }

    // The probe below sees the instrumentation when it is there (so its "none" with tracing off means none).
    for (const running of processes) {
      const report = await loadedModules(running);
      t.true(report.otelModules > 0, `${running.kind}: ${JSON.stringify(report)}`);
      t.true(report.requirePatched, running.kind);
      t.true(report.otelGlobals.includes('trace'), running.kind);
    }
  },
);

test.serial('tracing off: no OpenTelemetry module is loaded and nothing hooks require, after a write', async (t) => {
  const { processes, baseUrl } = await startProcesses(stack, {});
  t.teardown(() => Promise.all(processes.map((running) => stop(running.child))));
  const requestId = `untraced-${randomUUID()}`;
  await post(baseUrl, requestId, 'Untraced Holdings');
  // The write went all the way through: the event workers logged it (with its request id).
  await eventually(async () =>
    processes
      .filter((running) => running.kind === 'views' || running.kind === 'notifications')
      .every((running) => running.lines().some((line) => line.requestId === requestId)),
  );
  for (const running of processes) {
    const report = await loadedModules(running);
    t.is(report.otelModules, 0, `${running.kind}: ${JSON.stringify(report)}`);
    t.deepEqual(report.otelGlobals, [], running.kind);
    t.false(report.requirePatched, running.kind);
  }
});
