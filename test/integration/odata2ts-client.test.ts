import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { checkedFetch } from '../support/contract';
import { enc, insertReadFixture, type ReadFixture } from '../support/fixtures';
import { startStack, type Stack } from '../support/stack';

/**
 * A client generated from our `$metadata` by `@odata2ts/odata2ts` (issue 26, DESIGN §17), as a new
 * user makes one: its CLI downloads `/odata/$metadata` from the running service and writes a typed
 * service (`-m service -e ts`); `tsc` type-checks that code with a usage file written against it
 * (USAGE below, whose `@ts-expect-error` lines fail the compile if the types were loose); the
 * compiled usage then reads, filters, expands, selects, pages and counts, and creates, patches and
 * deletes, through the generated API and the runtime's fetch client. Every answer it receives is checked against the served metadata
 * (checkedFetch). Generated code, its compile and its output live in a scratch directory.
 */

const run = promisify(execFile);
const repoRoot = path.resolve(__dirname, '../../..');

/** What the usage file returns, as plain data the assertions below read. */
interface Reads {
  names: string[];
  filtered: { names: string[]; count: number | undefined };
  expanded: { city: string | null | undefined; keys: string[] };
  keyed: { name: string; keys: string[] };
  developments: { names: string[]; count: number | undefined };
  phase: string;
  notes: string[];
  address: string | null;
  paged: string[];
  pages: string[][];
}

/** Typed code against the generated service: tsc checks it, then it runs against the stack. */
const USAGE = `
import { FetchClient } from '@odata2ts/http-client-fetch';
import { EntityManagementService } from './gen/EntityManagementService';

export async function reads(serviceRoot: string, schemeId: string) {
  const client = new FetchClient();
  const service = new EntityManagementService(client, serviceRoot);
  const schemes = service.Schemes();

  const all = await schemes.query((b, q) => b.orderBy(q.SchemeName.asc()));
  const names: string[] = all.data.value.map((s) => s.SchemeName);

  const big = await schemes.query((b, q) => b.filter(q.TotalUnits.gt(30)).orderBy(q.TotalUnits.desc()).count());
  const filtered = { names: big.data.value.map((s) => s.SchemeName), count: big.data['@odata.count'] };

  const withAddress = await schemes.query((b, q) =>
    b
      .select('SchemeName', 'TotalUnits')
      .filter(q.SchemeName.eq('Alpha Tower'))
      .expanding('Address', (e) => e.select('City')),
  );
  const first = withAddress.data.value[0]!;
  const expanded = { city: first.Address?.City, keys: Object.keys(first).sort() };

  const one = await service.Schemes(schemeId).query();
  const keyed = { name: one.data.SchemeName, keys: Object.keys(one.data) };

  const phases = await service
    .Schemes(schemeId)
    .Developments()
    .query((b, q) => b.select('Name').filter(q.Name.ne('Phase 1')).count());
  const developments = { names: phases.data.value.map((d) => d.Name), count: phases.data['@odata.count'] };

  // One member of a navigation collection by key, and a complex collection property.
  const phaseId = phases.data.value[0]!.Id;
  const phase = (await service.Schemes(schemeId).Developments(phaseId).query()).data.Name;
  const notes = (await service.Schemes(schemeId).Notes().query()).data.value.map((n) => n.Text);

  const address = (await service.Schemes(schemeId).Address().query()).data.City;

  const window = await schemes.query((b, q) => b.orderBy(q.SchemeName.asc()).top(2).skip(1));
  const paged = window.data.value.map((s) => s.SchemeName);

  // Server-driven paging: pages of Prefer: odata.maxpagesize, followed by @odata.nextLink.
  const prefer = { headers: { Prefer: 'odata.maxpagesize=3' } };
  const pages: string[][] = [];
  let page = (await schemes.query(undefined, prefer)).data;
  pages.push(page.value.map((s) => s.Id));
  while (page['@odata.nextLink']) {
    page = (await client.get<typeof page>(page['@odata.nextLink'], prefer)).data;
    pages.push(page.value.map((s) => s.Id));
  }

  return { names, filtered, expanded, keyed, developments, phase, notes, address, paged, pages };
}

export async function writes(serviceRoot: string) {
  const client = new FetchClient();
  const service = new EntityManagementService(client, serviceRoot);
  // Deep insert of an owned collection; the timestamps and Ids the server manages are not asked for.
  const created = await service.Schemes().create({
    SchemeName: 'Typed Quay',
    TotalUnits: 12,
    Notes: [{ Text: 'generated' }],
    Tags: [],
    ExternalLinks: [],
    MarketBoundaries: [],
  });
  const scheme = service.Schemes(created.data.Id);
  const patch = await scheme.patch({ TotalUnits: 14 });
  const patched = (await scheme.query((b) => b.select('SchemeName', 'TotalUnits'))).data;
  const deleted = await scheme.delete();
  const gone = await scheme.query().then(
    () => 200,
    (err: { status?: number }) => err.status,
  );
  return {
    created: { status: created.status, name: created.data.SchemeName, notes: created.data.Notes.map((n) => n.Text) },
    patched: { status: patch.status, name: patched.SchemeName, units: patched.TotalUnits },
    deleted: deleted.status,
    gone,
  };
}

/** Never run: the generated types are precise, so each of these is a compile error. */
export async function typeErrors(service: EntityManagementService<FetchClient>, schemeId: string) {
  const schemes = service.Schemes();
  const one = await service.Schemes(schemeId).query();
  // @ts-expect-error SchemeName is a string
  const wrong: number = one.data.SchemeName;
  // @ts-expect-error Scheme has no property Nope
  await schemes.query((b, q) => b.filter(q.Nope.eq(1)));
  // @ts-expect-error TotalUnits is an Edm.Int32
  await schemes.query((b, q) => b.filter(q.TotalUnits.eq('many')));
  // @ts-expect-error SchemeName is required to create a Scheme
  await schemes.create({ TotalUnits: 1, Notes: [], Tags: [], ExternalLinks: [], MarketBoundaries: [] });
  return wrong;
}
`;

/**
 * odata2ts 0.34 treats only a single key as managed by the server (it does not read `Core.Computed`):
 * the config names the members the service stamps, so the editable models leave them out.
 */
const CONFIG = `module.exports = {
  propertiesByName: [
    { name: 'Id', managed: true },
    { name: 'CreatedAt', managed: true },
    { name: 'UpdatedAt', managed: true },
  ],
};
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'commonjs',
    moduleResolution: 'node10',
    lib: ['ES2023', 'DOM'],
    strict: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    outDir: 'out',
    rootDir: '.',
  },
  include: ['gen', 'usage.ts'],
};

let stack: Stack;
let fx: ReadFixture;
let scratch: string;

test.before(async () => {
  // The command worker runs the writes.
  stack = await startStack();
  fx = await insertReadFixture(stack.knex);
  scratch = await mkdtemp(path.join(tmpdir(), 'emapi-odata2ts-'));
  // The generated code imports the odata2ts runtime: resolved from this repository's node_modules.
  await symlink(path.join(repoRoot, 'node_modules'), path.join(scratch, 'node_modules'), 'dir');
  await writeFile(path.join(scratch, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  await writeFile(path.join(scratch, 'odata2ts.config.js'), CONFIG);
});
test.after.always(async () => {
  await stack?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Runs a node script in the scratch directory (its output on failure). */
async function node(script: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, [script, ...args], { cwd: scratch, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(script)} ${args.join(' ')} failed:\n${stdout ?? ''}\n${stderr ?? ''}`, {
      cause: err,
    });
  }
}

/** The runtime's fetch client calls the global fetch: each answer goes through the contract check meanwhile. */
async function withCheckedFetch<T>(work: () => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => checkedFetch(input, init, original);
  try {
    return await work();
  } finally {
    globalThis.fetch = original;
  }
}

test.serial(
  'the CLI generates a typed service from /odata/$metadata and tsc type-checks it with its usage',
  async (t) => {
    const cli = require.resolve('@odata2ts/odata2ts/lib/run-cli.js');
    const args = ['-u', `${stack.baseUrl}/odata`, '-s', 'metadata.xml', '-o', 'gen', '-m', 'service', '-e', 'ts'];
    const generated = await node(cli, args);
    t.regex(generated, /Successfully finished/);
    const service = await readFile(path.join(scratch, 'gen', 'EntityManagementService.ts'), 'utf8');
    t.regex(service, /export class EntityManagementService/);
    t.regex(service, /public Schemes\(id: SchemeId\): SchemeService/);

    await writeFile(path.join(scratch, 'usage.ts'), USAGE);
    await node(require.resolve('typescript/bin/tsc'), ['-p', 'tsconfig.json']);
    // The check can fail: the same usage with a type error in it does not compile.
    await writeFile(path.join(scratch, 'usage.ts'), `${USAGE}\nexport const broken: number = 'text';\n`);
    await t.throwsAsync(node(require.resolve('typescript/bin/tsc'), ['-p', 'tsconfig.json', '--noEmit']), {
      message: /TS2322/,
    });
    await writeFile(path.join(scratch, 'usage.ts'), USAGE);
  },
);

interface Usage {
  reads: (serviceRoot: string, schemeId: string) => Promise<Reads>;
  writes: (serviceRoot: string) => Promise<unknown>;
}

const compiledUsage = async () => (await import(path.join(scratch, 'out', 'usage.js'))) as Usage;

test.serial('the generated service reads, filters, expands, selects, pages and counts', async (t) => {
  const usage = await compiledUsage();
  const alpha = enc('Scheme', fx.schemes[0]!);
  const got = await withCheckedFetch(() => usage.reads(`${stack.baseUrl}/odata`, alpha));
  t.deepEqual(got.names, ['Alpha Tower', 'Beta Yard', 'Gamma Works', "x'; DROP TABLE schemes;--"]);
  t.deepEqual(got.filtered, { names: ['Alpha Tower', 'Beta Yard'], count: 2 });
  t.deepEqual(got.expanded, { city: 'London', keys: ['@odata.etag', 'Address', 'Id', 'SchemeName', 'TotalUnits'] });
  t.is(got.keyed.name, 'Alpha Tower');
  t.false(got.keyed.keys.includes('Address'), 'an unexpanded navigation property is left out');
  t.deepEqual(got.developments, { names: ['Phase 2'], count: 1 });
  t.is(got.phase, 'Phase 2');
  t.deepEqual(got.notes, ['first', 'second']);
  t.is(got.address, 'London');
  t.deepEqual(got.paged, ['Beta Yard', 'Gamma Works']);
  t.deepEqual(
    got.pages,
    [fx.schemes.slice(0, 3), fx.schemes.slice(3)].map((ids) => ids.map((id) => enc('Scheme', id))),
  );
});

test.serial('the generated service creates (with a deep insert), patches and deletes', async (t) => {
  const usage = await compiledUsage();
  const got = await withCheckedFetch(() => usage.writes(`${stack.baseUrl}/odata`));
  t.deepEqual(got, {
    created: { status: 201, name: 'Typed Quay', notes: ['generated'] },
    patched: { status: 204, name: 'Typed Quay', units: 14 },
    deleted: 204,
    gone: 404,
  });
});
