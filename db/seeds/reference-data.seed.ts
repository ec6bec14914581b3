import type { Knex } from 'knex';

/** Reference data every deployment starts with. Safe to re-run: it only adds what is missing. */

export const COUNTRIES: [string, string][] = [
  ['United Kingdom', 'GB'],
  ['Ireland', 'IE'],
  ['France', 'FR'],
  ['Germany', 'DE'],
  ['Netherlands', 'NL'],
  ['Spain', 'ES'],
  ['United States', 'US'],
];
export const BUILDING_TYPES = ['Office', 'Residential', 'Retail', 'Industrial', 'Logistics', 'Mixed Use', 'Hotel'];
export const DEVELOPMENT_TYPES = ['New Build', 'Refurbishment', 'Extension', 'Change of Use'];
export const DEVELOPMENT_STATUSES = ['Proposed', 'Planning Granted', 'Under Construction', 'Completed', 'Cancelled'];
export const MARKETS: [string, string][] = [
  ['Central London', 'GB'],
  ['Manchester', 'GB'],
  ['Dublin', 'IE'],
  ['Paris', 'FR'],
  ['Berlin', 'DE'],
];

export async function seedReferenceData(knex: Knex): Promise<void> {
  await knex('countries')
    .insert(COUNTRIES.map(([name, iso_code]) => ({ name, iso_code })))
    .onConflict('iso_code')
    .ignore();
  for (const [table, names] of [
    ['building_types', BUILDING_TYPES],
    ['development_types', DEVELOPMENT_TYPES],
    ['development_statuses', DEVELOPMENT_STATUSES],
  ] as const) {
    await knex(table)
      .insert(names.map((name) => ({ name })))
      .onConflict('name')
      .ignore();
  }
  // Markets have no unique name, so insert only those not present yet.
  for (const [name, iso] of MARKETS) {
    await knex.raw(
      `insert into markets (name, country_id)
       select ?, (select id from countries where iso_code = ?)
       where not exists (select 1 from markets where name = ?)`,
      [name, iso, name],
    );
  }
}
