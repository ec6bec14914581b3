import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Model } from 'objection';
import type pg from 'pg';
import type { Knex } from 'knex';
import { createKnex } from '../db/knex';
import { PROJECT_ROOT } from '../scripts/process-commands';
import { createLogger } from '../infra/logger';
import type { Command } from '../domain/commands/command';
import { createCommandRunner, type CommandRunner } from '../workers/commands/command-runner';
import { applyDesignFloorJob, designFloorPool } from './design-floor-writes';

/**
 * The command worker's CPU per PATCH without the queue (issue 28): in one process, one write at a
 * time, the service's command runner (the unit of work, the PATCH handler and its statements on
 * the worker's pipelined knex, as workers/commands/command-runner.ts runs a lone command) against
 * the design floor's hand-written transaction (design-floor-writes.ts), and an empty Objection
 * transaction against a bare pg BEGIN/COMMIT: the part of the runner's cost the design card's
 * "Objection transactions" fix. CPU is the process's own (process.cpuUsage): no other process, no
 * scheduler between processes, so the figures hold still where req/s runs on this VM do not.
 * The variants alternate, round after round, and each reports its median round.
 */

export interface CommandCpuOptions {
  databaseUrl: string;
  /** Rounds of every variant, alternated. */
  rounds?: number;
  /** Writes (or transactions) per variant and round. */
  ops?: number;
  /** Untimed operations of each variant before the first round (JIT, prepared statements). */
  warmup?: number;
}

export interface VariantFigures {
  variant: string;
  /** Median over the rounds of CPU µs per operation. */
  cpuMicros: number;
  /** Median over the rounds of wall µs per operation. */
  wallMicros: number;
  rounds: { cpuMicros: number; wallMicros: number }[];
}

interface Variant {
  variant: string;
  run(i: number): Promise<unknown>;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** A PATCH of a Scheme's name, as the API queues it (the signature is the worker's check, not the runner's). */
function patchCommand(key: number, i: number): Command {
  return {
    commandId: randomUUID(),
    subject: 'bench-command-cpu',
    issuedAt: new Date().toISOString(),
    name: 'patch',
    entity: 'Scheme',
    key,
    patch: [{ op: 'replace', path: '/SchemeName', value: `Command CPU ${i}` }],
    origin: { requestId: randomUUID() },
  };
}

async function timed(variant: Variant, ops: number, from: number): Promise<{ cpuMicros: number; wallMicros: number }> {
  const cpu = process.cpuUsage();
  const wall = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) await variant.run(from + i);
  const used = process.cpuUsage(cpu);
  return {
    cpuMicros: Math.round((used.user + used.system) / ops),
    wallMicros: Math.round(Number(process.hrtime.bigint() - wall) / 1000 / ops),
  };
}

function variantsOf(knex: Knex, pool: pg.Pool, run: CommandRunner, key: number): Variant[] {
  return [
    {
      variant: 'design floor: PATCH transaction',
      run: (i) => applyDesignFloorJob(pool, { kind: 'patch', id: key, field: 'SchemeName', value: `Command CPU ${i}` }),
    },
    {
      variant: 'service: command runner, PATCH',
      run: async (i) => {
        const result = await run(patchCommand(key, i));
        if (!result.ok) throw new Error(`the PATCH failed: ${JSON.stringify(result)}`);
      },
    },
    {
      variant: 'empty Objection transaction',
      run: () => Model.transaction(knex, async () => undefined),
    },
    {
      variant: 'empty pg transaction',
      run: async () => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      },
    },
  ];
}

/** Runs every variant `rounds` times, alternated, on the first Scheme of `databaseUrl`. */
export async function measureCommandCpu(options: CommandCpuOptions): Promise<VariantFigures[]> {
  const { rounds = 5, ops = 1000, warmup = 300 } = options;
  const logger = createLogger('bench-command-cpu', 'warn');
  // The command worker's knex: pipelined connections (db/pipelined-pg.ts).
  const knex = createKnex(options.databaseUrl, 2, logger, { pipelined: true });
  const pool = designFloorPool(options.databaseUrl, 2);
  try {
    const row = (await pool.query<{ id: number }>('select id from schemes order by id limit 1')).rows[0];
    if (!row) throw new Error('the database has no Scheme to PATCH');
    const run = createCommandRunner({ knex, logger, onCommitted: () => undefined });
    const variants = variantsOf(knex, pool, run, row.id);
    for (const variant of variants) for (let i = 0; i < warmup; i++) await variant.run(i);
    const measured = new Map<string, { cpuMicros: number; wallMicros: number }[]>();
    for (let round = 0; round < rounds; round++) {
      for (const variant of variants) {
        const figures = await timed(variant, ops, warmup + round * ops);
        measured.set(variant.variant, [...(measured.get(variant.variant) ?? []), figures]);
      }
    }
    return variants.map(({ variant }) => {
      const all = measured.get(variant)!;
      return {
        variant,
        cpuMicros: median(all.map((r) => r.cpuMicros)),
        wallMicros: median(all.map((r) => r.wallMicros)),
        rounds: all,
      };
    });
  } finally {
    await Promise.allSettled([knex.destroy(), pool.end()]);
  }
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is not set (npm run bench sets it)');
  const rounds = Number(process.env.COMMAND_CPU_ROUNDS ?? 5);
  const figures = await measureCommandCpu({ databaseUrl, rounds });
  console.log(`\nCommand CPU per operation, in one process (median of ${rounds} alternated rounds of 1,000):`);
  console.log('| variant | CPU µs | wall µs | rounds (CPU µs) |\n|---|--:|--:|---|');
  for (const f of figures) {
    console.log(`| ${f.variant} | ${f.cpuMicros} | ${f.wallMicros} | ${f.rounds.map((r) => r.cpuMicros).join(', ')} |`);
  }
  mkdirSync(path.join(PROJECT_ROOT, 'bench/results'), { recursive: true });
  const date = new Date().toISOString();
  const file = path.join(PROJECT_ROOT, 'bench/results', `${date.replace(/[:.]/g, '-')}-command-cpu.json`);
  writeFileSync(file, JSON.stringify({ date, figures }, null, 2) + '\n');
  console.log(`results: ${path.relative(PROJECT_ROOT, file)}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
