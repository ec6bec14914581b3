import type pg from 'pg';
import { zeroPoint } from '../domain/ids/id-codec';
import { SEARCH_RANK_WINDOW } from '../db/query/search-condition';

/**
 * The hand-written read floor (DESIGN §9, issue 12): for each read scenario of scenarios.ts, the
 * statements a person would write by hand for that one request — no compiler, prepared once per
 * connection, the plan they would choose — returning byte-for-byte the body the service returns
 * (test/integration/bench-handwritten-floor.test.ts checks it). It shares nothing with
 * db/query/ but the Id codec's zero-points, so it measures what the service's statements cost.
 */

/** An encoded Id in SQL: 4 bytes always give 6 base64 characters and `==`, so no rtrim. */
const id = (type: string, col: string) =>
  `translate(left(encode(int4send(${col} # (${zeroPoint(type)})), 'base64'), 6), '+/', '-_')`;
/** A reference `{ "Id" }`, or null when the column is. */
const ref = (type: string, col: string) =>
  `case when ${col} is null then null else json_build_object('Id', ${id(type, col)}) end`;
/** A reference through a NOT NULL column. */
const refNotNull = (type: string, col: string) => `json_build_object('Id', ${id(type, col)})`;
const ts = (col: string) => `to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The collections a Scheme always shows (list form: boundaries without geometry). */
function alwaysShown(form: 'keyed' | 'list'): string {
  const boundary =
    form === 'keyed'
      ? `json_build_object('Id', ${id('SchemeMarketBoundary', 'b.id')}, 'Geometry', b.geometry, 'CreatedAt', ${ts('b.created_at')}, 'UpdatedAt', ${ts('b.updated_at')}, 'Scheme', json_build_object('Id', s.encoded_id), 'Market', ${refNotNull('Market', 'b.market_id')})`
      : `json_build_object('Id', ${id('SchemeMarketBoundary', 'b.id')}, 'Market', ${refNotNull('Market', 'b.market_id')})`;
  return `'MarketBoundaries', coalesce((select json_agg(${boundary} order by b.position, b.id) from scheme_market_boundaries b where b.scheme_id = s.id), '[]'),
    'Notes', coalesce((select json_agg(json_build_object('Id', ${id('Note', 'n.id')}, 'Text', n.text) order by n.position, n.id) from scheme_notes n where n.scheme_id = s.id), '[]'),
    'Tags', coalesce((select json_agg(json_build_object('Id', ${id('Tag', 't.id')}, 'Name', t.name) order by t.position, t.id) from scheme_tags t where t.scheme_id = s.id), '[]'),
    'ExternalLinks', coalesce((select json_agg(json_build_object('Id', ${id('ExternalLink', 'l.id')}, 'Url', l.url, 'Title', l.title) order by l.position, l.id) from scheme_external_links l where l.scheme_id = s.id), '[]')`;
}

const schemeFields = `'Id', s.encoded_id, 'SchemeName', s.scheme_name, 'TotalUnits', s.total_units,
    'TotalFloorArea', s.total_floor_area, 'CompletionDate', s.completion_date,
    'CreatedAt', ${ts('s.created_at')}, 'UpdatedAt', ${ts('s.updated_at')}`;
const otherRefs = `'BuildingType', ${ref('BuildingType', 's.building_type_id')},
    'DevelopmentType', ${ref('DevelopmentType', 's.development_type_id')},
    'DevelopmentStatus', ${ref('DevelopmentStatus', 's.development_status_id')},
    'Market', ${ref('Market', 's.market_id')}, 'Country', ${ref('Country', 's.country_id')}`;

/** A list row of a Scheme with its Address reference and nothing expanded. */
const plainListScheme = `json_build_object(${schemeFields}, 'Address', ${ref('Address', 's.address_id')}, ${otherRefs}, ${alwaysShown('list')})`;

const addressFields = `'Id', a.encoded_id, 'AddressLine', a.address_line, 'City', a.city, 'Region', a.region,
    'Postcode', a.postcode, 'Latitude', a.latitude, 'Longitude', a.longitude,
    'CreatedAt', ${ts('a.created_at')}, 'UpdatedAt', ${ts('a.updated_at')}`;

/** `json_agg` of Schemes in `order`, `[]` when none, as text. */
const page = (doc: string, from: string, order: string) =>
  `select coalesce(json_agg(${doc} order by ${order}), '[]')::text as json ${from}`;

const KEYED: pg.QueryConfig = {
  name: 'hand_keyed',
  text: `select json_build_object(${schemeFields}, 'Address', ${ref('Address', 's.address_id')}, ${otherRefs}, ${alwaysShown('keyed')})::text as json, s.version
    from schemes s where s.id = $1`,
};

/** `$top=60&$expand=Address($expand=Country),Companies`: the page, then one join per expanded relation. */
const NESTED: pg.QueryConfig = {
  name: 'hand_nested',
  text: page(
    `json_build_object(${schemeFields},
      'Address', case when a.id is null then null else json_build_object(${addressFields},
        'Country', case when c.id is null then null else json_build_object('Id', ${id('Country', 'c.id')}, 'Name', c.name, 'IsoCode', c.iso_code, 'CreatedAt', ${ts('c.created_at')}, 'UpdatedAt', ${ts('c.updated_at')}) end) end,
      ${otherRefs},
      'Companies', coalesce((select json_agg(json_build_object('Id', ${id('SchemeCompany', 'sc.id')}, 'Role', sc.role, 'PercentageShare', sc.percentage_share, 'CreatedAt', ${ts('sc.created_at')}, 'UpdatedAt', ${ts('sc.updated_at')}, 'Scheme', json_build_object('Id', s.encoded_id), 'Company', ${refNotNull('Company', 'sc.company_id')}) order by sc.position, sc.id) from scheme_companies sc where sc.scheme_id = s.id), '[]'),
      ${alwaysShown('list')})`,
    `from (select * from schemes order by id limit $1 offset $2) s
      left join addresses a on a.id = s.address_id left join countries c on c.id = a.country_id`,
    's.id',
  ),
};

const FILTER = 'total_units >= $1 and scheme_name like $2';
const FILTERED: pg.QueryConfig = {
  name: 'hand_filtered',
  text: page(
    plainListScheme,
    `from (select * from schemes where ${FILTER} order by scheme_name desc, id limit $3 offset $4) s`,
    's.scheme_name desc, s.id',
  ),
};
/** The schemes matching `filter`, counted as the service counts (COUNT_LIMIT, 10,000): one row past the limit, then capped. */
const cappedCount = (name: string, filter: string): pg.QueryConfig => ({
  name,
  text: `select least(count(*), 10000)::int as n from (select 1 from schemes where ${filter} limit 10001) c`,
});
const FILTERED_COUNT = cappedCount('hand_filtered_count', FILTER);

/**
 * Match, then rank the window the service ranks (the first SEARCH_RANK_WINDOW matches in key
 * order), the matches after it following by key, then the page's Schemes. The matching documents
 * are probed once, in key order, up to one past the window; those whose Scheme exists are the
 * window when they fill it or when the probe found every match; otherwise (documents of deleted
 * rows, briefly) the key order is walked. The matches after the window are read only when the page
 * reaches past it. Not prepared: the probe's plan depends on the word (a walk of the key order for
 * a common one, a bitmap for a rare one).
 */
const MATCHES = `search_documents f where f.entity_type = 'Scheme' and f.document @@ to_tsquery('simple', $1)
               and exists (select from schemes x where x.id = f.entity_key)`;
const ALL_PROBED = `(select count(*) from c) <= ${SEARCH_RANK_WINDOW}`;
const PREFIX_FULL = `(select count(*) from p) = ${SEARCH_RANK_WINDOW}`;
const SEARCH: pg.QueryConfig = {
  text: page(
    plainListScheme,
    `from (with c as materialized (select f.entity_key from search_documents f
                                     where f.entity_type = 'Scheme' and f.document @@ to_tsquery('simple', $1)
                                     order by f.entity_key limit ${SEARCH_RANK_WINDOW + 1}),
                p as materialized (select c.entity_key from c where exists (select from schemes x where x.id = c.entity_key)
                                     order by c.entity_key limit ${SEARCH_RANK_WINDOW}),
                w as materialized (
                  (select p.entity_key from p where ${ALL_PROBED} or ${PREFIX_FULL})
                  union all
                  (select f.entity_key from ${MATCHES} and not (${ALL_PROBED} or ${PREFIX_FULL})
                     order by f.entity_key limit ${SEARCH_RANK_WINDOW}))
           select m.entity_key, m.part, m.rank from (
             (select w.entity_key, 0 as part, ts_rank(f.document, to_tsquery('simple', $1)) as rank
                from w join search_documents f on f.entity_type = 'Scheme' and f.entity_key = w.entity_key)
             union all
             (select f.entity_key, 1, 0::real from ${MATCHES}
                and f.entity_key > (select max(entity_key) from w) and (select count(*) from w) = ${SEARCH_RANK_WINDOW}
                and not ${ALL_PROBED} and $2::int + $3::int > ${SEARCH_RANK_WINDOW}
                order by f.entity_key limit $2::int + $3::int)
           ) m order by m.part, m.rank desc, m.entity_key limit $2 offset $3) m
      join schemes s on s.id = m.entity_key`,
    'm.part, m.rank desc, s.id',
  ),
};

/** The deep page: its keys from the primary key's index alone, then only those rows. */
const DEEP: pg.QueryConfig = {
  name: 'hand_deep',
  text: page(
    `json_build_object(${schemeFields},
      'Address', case when a.id is null then null else json_build_object(${addressFields}, 'Country', ${ref('Country', 'a.country_id')}) end,
      ${otherRefs}, ${alwaysShown('list')})`,
    `from (select id from schemes order by id limit $1 offset $2) p join schemes s using (id)
      left join addresses a on a.id = s.address_id`,
    's.id',
  ),
};

/**
 * The peers' scenarios c and d (../shared/peers/bench.config.json, target `project`) by hand, so a
 * side by side can put DESIGN §9's floor (the same bytes from the same rows) beside the peers' own:
 * c is `contains(SchemeName,'term') and BuildingType/Id eq '…'` by name, 60, with `$count`; d is
 * `$skip=50000&$top=60` with nothing expanded.
 */
const PEERS_FILTER = 'scheme_name like $1 and building_type_id = $2';
const PEERS_FILTERED: pg.QueryConfig = {
  name: 'hand_peers_filtered',
  text: page(
    plainListScheme,
    `from (select * from schemes where ${PEERS_FILTER} order by scheme_name, id limit $3 offset $4) s`,
    's.scheme_name, s.id',
  ),
};
const PEERS_FILTERED_COUNT = cappedCount('hand_peers_filtered_count', PEERS_FILTER);
const ROOT_DEEP: pg.QueryConfig = {
  name: 'hand_root_deep',
  text: page(
    plainListScheme,
    'from (select id from schemes order by id limit $1 offset $2) p join schemes s using (id)',
    's.id',
  ),
};

/** The request's query options (`$top`, `$skip`, `$search`) as a person would read them. */
export type Query = Record<string, string>;

export interface HandList {
  json: string;
  /** The `X-Total-Count` value, for the scenario that asks for `$count`. */
  count?: number;
}

type Db = Pick<pg.Pool, 'query'>;

async function json(db: Db, query: pg.QueryConfig, values: unknown[]): Promise<string> {
  const { rows } = await db.query<{ json: string }>({ ...query, values });
  return rows[0]!.json;
}

const paging = (q: Query) => [Number(q.$top), Number(q.$skip ?? 0)];

/** `$search` words, optionally OR-ed, as the prefix tsquery they mean. */
function tsquery(search: string): string {
  return search
    .split(/\s+OR\s+/)
    .map((group) =>
      group
        .split(/\s+/)
        .map((w) => `${w}:*`)
        .join(' & '),
    )
    .join(' | ');
}

/** One keyed read: the body and the version (its ETag), or null. */
export async function handKeyed(db: Db, key: number): Promise<{ json: string; version: number } | null> {
  const { rows } = await db.query<{ json: string; version: number }>({ ...KEYED, values: [key] });
  return rows[0] ?? null;
}

/**
 * The hand-written read of each list scenario of scenarios.ts, by name, for the query it sends
 * (any `$top` / `$skip`). The filter's bounds are that scenario's, written in.
 */
export const HAND_LISTS: Record<string, (db: Db, query: Query) => Promise<HandList>> = {
  'list $top=60 + nested $expand': async (db, q) => ({ json: await json(db, NESTED, paging(q)) }),
  'filtered + ordered + $count': async (db, q) => {
    const [body, count] = await Promise.all([
      json(db, FILTERED, [100, 'Alpha%', ...paging(q)]),
      db.query<{ n: number }>({ ...FILTERED_COUNT, values: [100, 'Alpha%'] }),
    ]);
    return { json: body, count: count.rows[0]!.n };
  },
  $search: async (db, q) => ({ json: await json(db, SEARCH, [tsquery(q.$search!), ...paging(q)]) }),
  'deep $skip=50000': async (db, q) => ({ json: await json(db, DEEP, paging(q)) }),
  '$search of 20 OR-ed words': async (db, q) => ({ json: await json(db, SEARCH, [tsquery(q.$search!), ...paging(q)]) }),
};

/** The peers' scenarios by hand (see PEERS_FILTERED): `term` is a word without `%`, `_` or `\\`. */
export const HAND_PEERS = {
  filtered: async (db: Db, term: string, buildingType: number, top: number, skip: number): Promise<HandList> => {
    const filter = [`%${term}%`, buildingType];
    const [body, count] = await Promise.all([
      json(db, PEERS_FILTERED, [...filter, top, skip]),
      db.query<{ n: number }>({ ...PEERS_FILTERED_COUNT, values: filter }),
    ]);
    return { json: body, count: count.rows[0]!.n };
  },
  deep: async (db: Db, top: number, skip: number): Promise<HandList> => ({
    json: await json(db, ROOT_DEEP, [top, skip]),
  }),
};
