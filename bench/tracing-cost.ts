import { KINDS, LABELS, autocannonRun, eventsDrained, stopAll, until } from './bench-runs';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT, nodeArgsOf, type ProcessKind } from '../scripts/process-commands';
import { cpuWindow, type CpuPerRequest } from './process-cpu';

/**
 * `BENCH_ONLY=tracing npm run bench`: what tracing costs (DESIGN §15, issue 14), and that it costs
 * nothing when off. The API and the three workers are started twice, as `npm start` runs them, on a
 * queue prefix of their own: once without OTEL_* (tracing off: no OpenTelemetry code loaded), once
 * exporting to a local OTLP/HTTP sink (bench/otlp-sink.ts, protobuf, the default protocol). Each
 * time the same POSTs at the same concurrency, after the same warm-up; the CPU each process spends
 * per write is read from /proc, until the event workers have handled the run's events.
 *
 * "Free when off" is a comparison with the code before tracing: BENCH_TRACING_BASELINE names a
 * built checkout of it (the same package.json scripts), run as a third mode, `before`.
 * BENCH_TRACING_ROUNDS (default 1) repeats the modes in turn, so a shared machine's drift spreads
 * over all of them.
 */

const PREFIX = 'bench-tracing';
const PORT = Number(process.env.BENCH_TRACING_API_PORT ?? 3905);
const SINK_PORT = Number(process.env.BENCH_OTLP_SINK_PORT ?? 3906);

export interface TracingCostOptions {
  /** The service's environment (stores, signing key, auth, log level). */
  env: Record<string, string>;
  redisUrl: string;
  concurrency: number;
  durationSeconds: number;
  warmupRequests: number;
}

type Mode = 'before' | 'off' | 'on';

export interface TracingRun {
  /** `before`: the baseline checkout (BENCH_TRACING_BASELINE), which has no tracing code. */
  tracing: Mode;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpu: CpuPerRequest;
  /** Spans' export requests and bytes the sink took (tracing on). */
  exported?: { requests: number; bytes: number };
}

const post = {
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ SchemeName: 'Traced bench [<id>]' }),
  idReplacement: true,
};

/** The node arguments of a process kind, from the baseline checkout for `before`. */
function argsOf(kind: ProcessKind, mode: Mode): string[] {
  const args = nodeArgsOf(kind);
  const baseline = process.env.BENCH_TRACING_BASELINE;
  if (mode !== 'before' || !baseline) return args;
  return args.map((arg) =>
    arg.startsWith(PROJECT_ROOT) ? path.join(baseline, path.relative(PROJECT_ROOT, arg)) : arg,
  );
}

async function measure(options: TracingCostOptions, tracing: Mode): Promise<TracingRun> {
  const children: ChildProcess[] = [];
  const spawnNode = (args: string[], env: Record<string, string>) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.resume();
    children.push(child);
    return child;
  };
  try {
    let sink: ChildProcess | undefined;
    let sinkOutput = '';
    const otel: Record<string, string> = {};
    if (tracing === 'on') {
      sink = spawnNode([path.join(PROJECT_ROOT, 'dist/bench/otlp-sink.js')], { PORT: String(SINK_PORT) });
      sink.stdout!.on('data', (chunk: Buffer) => (sinkOutput += chunk.toString()));
      await until(async () => (await fetch(`http://127.0.0.1:${SINK_PORT}/`)).ok, 'the OTLP sink up', 10_000);
      otel.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${SINK_PORT}`;
    }
    const env = { ...options.env, ...otel, QUEUE_PREFIX: PREFIX };
    const pids = new Map<ProcessKind, number>();
    for (const kind of KINDS) {
      const child = spawnNode(argsOf(kind, tracing), kind === 'api' ? { ...env, PORT: String(PORT) } : env);
      pids.set(kind, child.pid!);
    }
    const url = `http://127.0.0.1:${PORT}/Schemes`;
    await until(async () => (await fetch(`http://127.0.0.1:${PORT}/health/ready`)).ok, 'the API ready', 30_000);
    await autocannonRun({ url, connections: 16, amount: options.warmupRequests, ...post });
    await eventsDrained(options.redisUrl, PREFIX);
    const window = cpuWindow(
      KINDS.map((kind) => ({ label: LABELS[kind], pid: pids.get(kind)!, withDescendants: true })),
    );
    const result = await autocannonRun({
      url,
      connections: options.concurrency,
      duration: options.durationSeconds,
      ...post,
    });
    await eventsDrained(options.redisUrl, PREFIX);
    const cpu = window(result.requests.total);
    let exported: TracingRun['exported'];
    if (sink) {
      sink.kill('SIGUSR2'); // the sink prints what it took
      await until(async () => sinkOutput.includes('\n'), 'the sink report', 10_000);
      exported = JSON.parse(sinkOutput.split('\n')[0]!) as TracingRun['exported'];
    }
    return {
      tracing,
      rps: Math.round(result.requests.average),
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts + result.non2xx,
      cpu,
      exported,
    };
  } finally {
    await stopAll(children);
  }
}

/** Every mode in turn (the baseline first when given), each round; prints a table, returns the figures. */
export async function tracingCost(options: TracingCostOptions): Promise<TracingRun[]> {
  const runs: TracingRun[] = [];
  const modes: Mode[] = process.env.BENCH_TRACING_BASELINE ? ['before', 'off', 'on'] : ['off', 'on'];
  const rounds = Number(process.env.BENCH_TRACING_ROUNDS ?? 1);
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      console.error(`  tracing ${mode}: POST c=${options.concurrency}, ${options.durationSeconds} s…`);
      runs.push(await measure(options, mode));
    }
  }
  printTracingCost(runs, options.concurrency);
  return runs;
}

function printTracingCost(runs: TracingRun[], concurrency: number): void {
  const labels = Object.keys(runs[0]!.cpu.perProcess);
  const ms = (v: number | null | undefined) => (v == null ? '—' : v.toFixed(2));
  console.log(`\nTracing cost: POST (minimal), c=${concurrency}; CPU ms per write by process\n`);
  console.log(`| tracing | req/s | p50 ms | p99 ms | errors | ${labels.join(' | ')} | total |`);
  console.log(`| --- | --- | --- | --- | --- | ${labels.map(() => '---').join(' | ')} | --- |`);
  for (const r of runs) {
    console.log(
      `| ${r.tracing} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${labels.map((l) => ms(r.cpu.perProcess[l])).join(' | ')} | ${ms(r.cpu.total)} |`,
    );
  }
  const on = runs.find((r) => r.tracing === 'on');
  if (on?.exported) {
    console.log(
      `\nexported while on: ${on.exported.requests} OTLP requests, ${(on.exported.bytes / 1024 / 1024).toFixed(1)} MiB`,
    );
  }
}
