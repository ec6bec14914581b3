import type { Knex } from 'knex';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * A deterministic, realistic data set at the proportions of DESIGN §9 (per 100k schemes: 100k
 * addresses, 20k companies, 200k company links, 300k notes and tags, 50k developments, plus events,
 * portfolios and boundaries), loaded with COPY. Keys are assigned here (continuing after any rows
 * already present) so children can point at parents without round trips.
 */

export interface GenerateOptions {
  schemes: number;
  seed: number;
  onProgress?: (table: string, rows: number) => void;
  /**
   * Load nothing (and answer null) when the schemes table has rows. Checked in the loading
   * transaction under a lock that also blocks inserts, so two loaders cannot both find it empty.
   */
  onlyWithoutSchemes?: boolean;
}

/** mulberry32: a small, fast, seedable PRNG, so the same seed gives the same data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STREETS = [
  'High Street',
  'Station Road',
  'Church Lane',
  'Quay Road',
  'Mill Lane',
  'Park Avenue',
  'King Street',
  'Victoria Road',
  'Market Square',
  'Canal Walk',
  'Bridge Street',
  'Harbour Way',
];
const CITIES: [string, string, string][] = [
  ['London', 'EC', 'GB'],
  ['Manchester', 'M', 'GB'],
  ['Birmingham', 'B', 'GB'],
  ['Leeds', 'LS', 'GB'],
  ['Bristol', 'BS', 'GB'],
  ['Dublin', 'D', 'IE'],
  ['Cork', 'T12', 'IE'],
  ['Paris', '75', 'FR'],
  ['Lyon', '69', 'FR'],
  ['Berlin', '10', 'DE'],
  ['Munich', '80', 'DE'],
  ['Amsterdam', '10', 'NL'],
  ['Madrid', '28', 'ES'],
  ['New York', '100', 'US'],
];
const NAME_A = [
  'Alpha',
  'Beacon',
  'Cedar',
  'Delta',
  'Echo',
  'Falcon',
  'Granite',
  'Harbour',
  'Iron',
  'Juniper',
  'Kestrel',
  'Lumen',
  'Meridian',
  'Northgate',
  'Oak',
  'Pier',
  'Quarry',
  'Riverside',
  'Sterling',
  'Thames',
  'Union',
  'Vantage',
  'Wharf',
  'Yardley',
];
const NAME_B = [
  'Tower',
  'Yard',
  'Works',
  'Place',
  'Quarter',
  'Gardens',
  'House',
  'Court',
  'Exchange',
  'Point',
  'Square',
  'Park',
  'Wharf',
  'Mills',
  'Village',
];
const CO_A = [
  'Acme',
  'Aurora',
  'Blackstone',
  'Crown',
  'Dominion',
  'Evergreen',
  'Foundry',
  'Grosvenor',
  'Helix',
  'Keystone',
  'Landmark',
  'Summit',
  'Pinnacle',
  'Redwood',
  'Sovereign',
  'Trident',
];
const CO_B = [
  'Holdings',
  'Capital',
  'Partners',
  'Developments',
  'Estates',
  'Investments',
  'Properties',
  'Group',
  'Real Estate',
  'Ventures',
];
const ROLES = ['Developer', 'Investor', 'Lender', 'Contractor', 'Architect', 'Agent'];
const TAGS = [
  'flagship',
  'green',
  'brownfield',
  'mixed-use',
  'affordable',
  'listed',
  'riverside',
  'transit',
  'student',
  'co-living',
  'net-zero',
  'phase-1',
];
const NOTE_WORDS = [
  'planning',
  'approved',
  'viability',
  'review',
  'tenant',
  'demand',
  'strong',
  'pending',
  'survey',
  'completed',
  'funding',
  'secured',
  'delay',
  'expected',
  'leasing',
  'progress',
];

function csv(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = String(value);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

async function nextId(knex: Knex, table: string): Promise<number> {
  const row = (await knex(table).max('id as max').first()) as { max: number | null };
  return (row?.max ?? 0) + 1;
}

/** Streams generated rows into COPY, in chunks, with backpressure. */
async function copyRows(
  client: PoolClient,
  table: string,
  columns: string[],
  count: number,
  row: (i: number) => unknown[],
): Promise<void> {
  if (count <= 0) return;
  const sink = client.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin with (format csv)`));
  let i = 0;
  const source = new Readable({
    read() {
      let chunk = '';
      for (let n = 0; n < 2000 && i < count; n++, i++) chunk += `${row(i).map(csv).join(',')}\n`;
      this.push(chunk.length ? chunk : null);
    },
  });
  await pipeline(source, sink);
}

export async function generateData(knex: Knex, options: GenerateOptions): Promise<Record<string, number> | null> {
  const rand = prng(options.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
  const int = (min: number, max: number) => min + Math.floor(rand() * (max - min + 1));
  const N = options.schemes;
  const counts = {
    addresses: N,
    companies: Math.max(1, Math.round(N * 0.2)),
    schemes: N,
    scheme_companies: N * 2,
    scheme_notes: Math.round(N * 1.5),
    scheme_tags: Math.round(N * 1.5),
    scheme_external_links: Math.round(N * 0.3),
    scheme_market_boundaries: Math.round(N * 0.1),
    developments: Math.round(N * 0.5),
    portfolios: Math.max(1, Math.round(N * 0.005)),
    investment_events: Math.round(N * 0.3),
    investment_companies: Math.round(N * 0.3),
    occupier_events: Math.round(N * 0.3),
  };

  const ref = async (table: string) =>
    ((await knex(table).select('id').orderBy('id')) as { id: number }[]).map((r) => r.id);
  // In key order: the same seed picks the same rows whatever order Postgres returns them in.
  const countries = (await knex('countries').select('id', 'iso_code').orderBy('id')) as {
    id: number;
    iso_code: string;
  }[];
  const countryOf = new Map(countries.map((c) => [c.iso_code, c.id]));
  const [buildingTypes, devTypes, devStatuses, markets] = await Promise.all([
    ref('building_types'),
    ref('development_types'),
    ref('development_statuses'),
    ref('markets'),
  ]);
  const base: Record<string, number> = {};
  for (const table of Object.keys(counts)) base[table] = await nextId(knex, table);
  const id = (table: keyof typeof counts, i: number) => base[table]! + i;

  const pg = (await knex.client.acquireConnection()) as PoolClient;
  try {
    await pg.query('begin');
    if (options.onlyWithoutSchemes) {
      await pg.query('lock table schemes in share row exclusive mode');
      const { rows } = await pg.query<{ found: boolean }>('select exists (select 1 from schemes) as found');
      if (rows[0]!.found) {
        await pg.query('rollback');
        return null;
      }
    }
    const step = async (table: keyof typeof counts, columns: string[], row: (i: number) => unknown[]) => {
      await copyRows(pg, table, ['id', ...columns], counts[table], (i) => [id(table, i), ...row(i)]);
      options.onProgress?.(table, counts[table]);
    };
    await step('addresses', ['address_line', 'city', 'postcode', 'country_id', 'latitude', 'longitude'], () => {
      const [city, pc, iso] = pick(CITIES);
      return [
        `${int(1, 400)} ${pick(STREETS)}`,
        city,
        `${pc}${int(1, 99)} ${int(1, 9)}${String.fromCharCode(65 + int(0, 25))}${String.fromCharCode(65 + int(0, 25))}`,
        countryOf.get(iso) ?? null,
        (rand() * 20 + 40).toFixed(6),
        (rand() * 20 - 5).toFixed(6),
      ];
    });
    await step('companies', ['name', 'registration_number', 'website', 'country_id'], (i) => {
      const name = `${pick(CO_A)} ${pick(CO_B)} ${i + 1}`;
      return [
        name,
        `RN${String(100000 + i)}`,
        `https://www.${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.example`,
        pick(countries).id,
      ];
    });
    await step(
      'schemes',
      [
        'scheme_name',
        'address_id',
        'building_type_id',
        'development_type_id',
        'development_status_id',
        'market_id',
        'country_id',
        'total_units',
        'total_floor_area',
        'completion_date',
      ],
      (i) => [
        `${pick(NAME_A)} ${pick(NAME_B)} ${i + 1}`,
        id('addresses', i),
        pick(buildingTypes),
        rand() < 0.8 ? pick(devTypes) : null,
        pick(devStatuses),
        rand() < 0.7 ? pick(markets) : null,
        pick(countries).id,
        int(0, 800),
        (rand() * 50000).toFixed(1),
        rand() < 0.9
          ? `${int(2015, 2032)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`
          : null,
      ],
    );
    await step('scheme_companies', ['scheme_id', 'company_id', 'role', 'percentage_share', 'position'], (i) => [
      id('schemes', Math.floor(i / 2)),
      id('companies', int(0, counts.companies - 1)),
      pick(ROLES),
      rand().toFixed(3),
      i % 2,
    ]);
    await step('scheme_notes', ['scheme_id', 'text', 'position'], (i) => [
      id('schemes', int(0, N - 1)),
      Array.from({ length: int(4, 12) }, () => pick(NOTE_WORDS)).join(' '),
      i % 3,
    ]);
    await step('scheme_tags', ['scheme_id', 'name', 'position'], (i) => [
      id('schemes', int(0, N - 1)),
      pick(TAGS),
      i % 3,
    ]);
    await step('scheme_external_links', ['scheme_id', 'url', 'title', 'position'], (i) => [
      id('schemes', int(0, N - 1)),
      `https://news.example/scheme/${i}`,
      'Press coverage',
      0,
    ]);
    await step('scheme_market_boundaries', ['scheme_id', 'market_id', 'geometry', 'position'], (i) => {
      const x = (rand() * 10).toFixed(4);
      const y = (rand() * 50).toFixed(4);
      return [
        id('schemes', i * 10),
        pick(markets),
        `POLYGON((${x} ${y}, ${x} ${Number(y) + 0.01}, ${Number(x) + 0.01} ${Number(y) + 0.01}, ${x} ${y}))`,
        0,
      ];
    });
    await step(
      'developments',
      ['name', 'scheme_id', 'development_type_id', 'development_status_id', 'units', 'floor_area', 'start_date'],
      (i) => [
        `Phase ${(i % 4) + 1}`,
        id('schemes', int(0, N - 1)),
        pick(devTypes),
        pick(devStatuses),
        int(0, 300),
        (rand() * 20000).toFixed(1),
        `${int(2012, 2030)}-0${int(1, 9)}-1${int(0, 9)}`,
      ],
    );
    await step('portfolios', ['name', 'description'], (i) => [`${pick(CO_A)} Fund ${i + 1}`, 'Generated portfolio']);
    await step('investment_events', ['event_date', 'scheme_id', 'portfolio_id', 'price', 'currency'], () => [
      `${int(2010, 2026)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`,
      id('schemes', int(0, N - 1)),
      rand() < 0.5 ? id('portfolios', int(0, counts.portfolios - 1)) : null,
      int(100000, 90000000),
      pick(['GBP', 'EUR', 'USD']),
    ]);
    await step(
      'investment_companies',
      ['investment_event_id', 'company_id', 'role', 'percentage_share', 'position'],
      (i) => [
        id('investment_events', i),
        id('companies', int(0, counts.companies - 1)),
        pick(['Buyer', 'Seller', 'Advisor']),
        '1',
        0,
      ],
    );
    await step(
      'occupier_events',
      ['event_date', 'scheme_id', 'company_id', 'floor_area', 'annual_rent', 'currency', 'lease_expiry_date'],
      () => [
        `${int(2010, 2026)}-0${int(1, 9)}-1${int(0, 9)}`,
        id('schemes', int(0, N - 1)),
        id('companies', int(0, counts.companies - 1)),
        int(100, 20000),
        int(10000, 5000000),
        pick(['GBP', 'EUR']),
        `${int(2027, 2040)}-0${int(1, 9)}-1${int(0, 9)}`,
      ],
    );
    for (const table of Object.keys(counts)) {
      await pg.query(
        `select setval(pg_get_serial_sequence('${table}', 'id'), greatest((select max(id) from ${table}), 1))`,
      );
    }
    await pg.query('commit');
  } catch (err) {
    await pg.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await knex.client.releaseConnection(pg);
  }
  for (const table of Object.keys(counts)) await knex.raw('analyze ??', [table]);
  return counts;
}
