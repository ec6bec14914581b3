import { randomUUID } from 'node:crypto';
import test from 'ava';
import type { Command, CommandResult } from '../../domain/commands/command';
import type { DomainEvent } from '../../domain/events/domain-event';
import type { WriteOrigin } from '../../domain/commands/write-origin';
import { DEFAULT_GEOMETRY_LIMITS } from '../../domain/writes/geometry-limits';
import { DEFAULT_PATCH_LIMITS } from '../../domain/writes/json-patch';
import { createLogger } from '../../infra/logger';
import { createCommandRunner } from '../../workers/commands/command-runner';
import { createGroupCommitRunner } from '../../workers/commands/group-commit';
import { databasePerFile } from '../support/database-per-file';

/**
 * Group commit (workers/commands/group-commit.ts): commands handed over in the same turn share one
 * transaction (seen as one `xmin` on their command_log rows), each with its own result, its
 * command_log row and its events; a group with a failing or already recorded command is rolled
 * back and every command of it runs alone, so the failure is only its own and nothing is applied
 * twice.
 */

const db = databasePerFile(4);
const logger = createLogger('test', 'silent');
const limits = { patchLimits: DEFAULT_PATCH_LIMITS, geometryLimits: DEFAULT_GEOMETRY_LIMITS };

function runners() {
  const committed: { events: DomainEvent[]; origin: WriteOrigin | undefined }[] = [];
  const onCommitted = (events: DomainEvent[], origin: WriteOrigin | undefined) => committed.push({ events, origin });
  const runAlone = createCommandRunner({ knex: db.knex, logger, onCommitted });
  const grouped = createGroupCommitRunner({ knex: db.knex, logger, limits, runAlone, onCommitted });
  return { runAlone, grouped, committed };
}

function createCompany(name: string): Command {
  return {
    commandId: randomUUID(),
    name: 'create',
    entity: 'Company',
    body: { Name: name, RegistrationNumber: null, Website: null, Country: null },
    subject: 'tester',
    issuedAt: new Date().toISOString(),
    origin: { requestId: `req-${name}` },
  };
}

/** The transaction ids that wrote these commands' command_log rows. */
async function writers(commands: Command[]): Promise<Set<string>> {
  const rows = (await db
    .knex('command_log')
    .whereIn(
      'command_id',
      commands.map((c) => c.commandId),
    )
    .select(db.knex.raw('xmin::text as xmin'))) as { xmin: string }[];
  return new Set(rows.map((r) => r.xmin));
}

const companies = async (name: string) =>
  Number(((await db.knex('companies').where({ name }).count({ n: '*' }).first()) as { n: number }).n);

test('commands handed over together commit in one transaction, each with its result, log row and event', async (t) => {
  const { grouped, committed } = runners();
  const commands = ['G1', 'G2', 'G3', 'G4', 'G5'].map(createCompany);
  const results = await Promise.all(commands.map((command) => grouped(command)));
  t.true(results.every((r) => r.ok));
  t.is(new Set(results.map((r) => (r as Extract<CommandResult, { ok: true }>).dbId)).size, 5);
  t.is((await writers(commands)).size, 1, 'one transaction');
  for (const [i, command] of commands.entries()) {
    const logged = (await db.knex('command_log').where('command_id', command.commandId).first()) as {
      result: CommandResult;
    };
    t.deepEqual(logged.result, results[i]);
    const outbox = (await db.knex('outbox').whereRaw("event->>'commandId' = ?", [command.commandId])) as {
      origin: WriteOrigin;
    }[];
    t.is(outbox.length, 1);
    t.deepEqual(outbox[0]!.origin, command.origin);
  }
  t.deepEqual(
    committed.map((c) => c.origin),
    commands.map((c) => c.origin),
  );
});

test('a failing command in a group fails alone: the others commit, each once', async (t) => {
  const { grouped, committed } = runners();
  const good = ['F1', 'F2', 'F3'].map(createCompany);
  const missing: Command = {
    commandId: randomUUID(),
    name: 'patch',
    entity: 'Company',
    key: 2_000_000_000,
    patch: [{ op: 'replace', path: '/Name', value: 'nobody' }],
    subject: 'tester',
    issuedAt: new Date().toISOString(),
  };
  const commands = [good[0]!, missing, good[1]!, good[2]!];
  const results = await Promise.all(commands.map((command) => grouped(command)));
  t.deepEqual(
    results.map((r) => r.ok),
    [true, false, true, true],
  );
  t.like(results[1], { ok: false, failure: { kind: 'NotFound' } });
  for (const name of ['F1', 'F2', 'F3']) t.is(await companies(name), 1);
  t.is(committed.length, 3, 'one event per applied command');
  const logged = (await db.knex('command_log').where('command_id', missing.commandId).first()) as {
    result: CommandResult;
  };
  t.deepEqual(logged.result, results[1]);
});

test('a command recorded before, handed over again in a group, returns its recorded result', async (t) => {
  const { runAlone, grouped } = runners();
  const earlier = createCompany('Recorded Once');
  const first = await runAlone(earlier);
  const others = ['R1', 'R2'].map(createCompany);
  const [again, ...rest] = await Promise.all([earlier, ...others].map((command) => grouped(command)));
  t.deepEqual(again, first);
  t.true(rest.every((r) => r.ok));
  t.is(await companies('Recorded Once'), 1);
  t.is(await companies('R1'), 1);
  t.is((await db.knex('outbox').whereRaw("event->>'commandId' = ?", [earlier.commandId])).length, 1, 'its event once');
});
