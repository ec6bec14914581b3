import type { Knex } from 'knex';

/**
 * The entity tables as first released, written out literally: a migration never changes once
 * applied, so it must not read the live definitions in domain/entities (adding a field there would
 * otherwise alter this migration's result on a fresh database and never reach an existing one).
 * Changes are later migrations of their own; test/integration/schema-drift.test.ts fails when the
 * migrated schema and the definitions disagree.
 *
 * Conventions every entity table follows (the drift test checks them):
 * - `id serial`, then its fields, then `created_at`, `updated_at` and `version` (bumped by the
 *   `<table>_touch` trigger on every update; the ETag is derived from it);
 * - the five tables that accept bare integer keys store the encoded Id as a generated column (the
 *   codec of domain/ids/id-codec.ts with the type's zero point, as in db/sql/encoded-id.sql.ts);
 * - one indexed `<relation>_id` column per relation; deletes are refused while rows point at a row,
 *   except for the items of an owned collection, which go with their parent (DESIGN §6);
 * - items of owned collections keep the order they were written in: `position` (DESIGN §10);
 * - owned records (notes, tags, external links) hang off their declared parent: no version, no
 *   trigger (their parent's version moves instead).
 *
 * Column order, constraint names and even the trigger function's indentation are those of the first
 * release (which built the tables from the definitions), so databases migrated before and after this
 * file was frozen have one schema: `pg_dump --schema-only` of both is identical.
 */

const UP = `
create or replace function touch_row() returns trigger language plpgsql as $$
    begin
      new.version := old.version + 1;
      new.updated_at := now();
      return new;
    end $$;

create table countries (
  id serial primary key,
  name text not null,
  iso_code text not null constraint countries_iso_code_unique unique,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1
);

create table building_types (
  id serial primary key,
  name text not null constraint building_types_name_unique unique,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1
);

create table development_types (
  id serial primary key,
  name text not null constraint development_types_name_unique unique,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1
);

create table development_statuses (
  id serial primary key,
  name text not null constraint development_statuses_name_unique unique,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1
);

create table markets (
  id serial primary key,
  name text not null,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  country_id integer constraint markets_country_id_foreign references countries (id) on delete restrict
);
create index markets_country_id_index on markets (country_id);
create index markets_name_index on markets (name);

create table addresses (
  id serial primary key,
  address_line text not null,
  city text,
  region text,
  postcode text,
  latitude double precision,
  longitude double precision,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  encoded_id text generated always as (rtrim(translate(encode(int4send(id # (546303830)), 'base64'), '+/', '-_'), '=')) stored,
  country_id integer constraint addresses_country_id_foreign references countries (id) on delete restrict
);
create unique index addresses_encoded_id_unique on addresses (encoded_id);
create index addresses_country_id_index on addresses (country_id);
create index addresses_postcode_index on addresses (postcode);
create index addresses_city_index on addresses (city);

create table companies (
  id serial primary key,
  name text not null,
  registration_number text,
  website text,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  country_id integer constraint companies_country_id_foreign references countries (id) on delete restrict
);
create index companies_country_id_index on companies (country_id);
create index companies_name_index on companies (name);

create table schemes (
  id serial primary key,
  scheme_name text not null,
  total_units integer,
  total_floor_area double precision,
  completion_date date,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  encoded_id text generated always as (rtrim(translate(encode(int4send(id # (-2024364324)), 'base64'), '+/', '-_'), '=')) stored,
  address_id integer constraint schemes_address_id_foreign references addresses (id) on delete restrict,
  building_type_id integer constraint schemes_building_type_id_foreign references building_types (id) on delete restrict,
  development_type_id integer
    constraint schemes_development_type_id_foreign references development_types (id) on delete restrict,
  development_status_id integer
    constraint schemes_development_status_id_foreign references development_statuses (id) on delete restrict,
  market_id integer constraint schemes_market_id_foreign references markets (id) on delete restrict,
  country_id integer constraint schemes_country_id_foreign references countries (id) on delete restrict
);
create unique index schemes_encoded_id_unique on schemes (encoded_id);
create index schemes_address_id_index on schemes (address_id);
create index schemes_building_type_id_index on schemes (building_type_id);
create index schemes_development_type_id_index on schemes (development_type_id);
create index schemes_development_status_id_index on schemes (development_status_id);
create index schemes_market_id_index on schemes (market_id);
create index schemes_country_id_index on schemes (country_id);
create index schemes_scheme_name_index on schemes (scheme_name);
create index schemes_completion_date_index on schemes (completion_date);
create index schemes_created_at_index on schemes (created_at);

create table developments (
  id serial primary key,
  name text not null,
  units integer,
  floor_area double precision,
  start_date date,
  completion_date date,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  scheme_id integer not null constraint developments_scheme_id_foreign references schemes (id) on delete restrict,
  development_type_id integer
    constraint developments_development_type_id_foreign references development_types (id) on delete restrict,
  development_status_id integer
    constraint developments_development_status_id_foreign references development_statuses (id) on delete restrict
);
create index developments_scheme_id_index on developments (scheme_id);
create index developments_development_type_id_index on developments (development_type_id);
create index developments_development_status_id_index on developments (development_status_id);
create index developments_name_index on developments (name);

create table portfolios (
  id serial primary key,
  name text not null,
  description text,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  encoded_id text generated always as (rtrim(translate(encode(int4send(id # (787174168)), 'base64'), '+/', '-_'), '=')) stored
);
create unique index portfolios_encoded_id_unique on portfolios (encoded_id);
create index portfolios_name_index on portfolios (name);

create table investment_events (
  id serial primary key,
  event_date date not null,
  price double precision,
  currency text,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  encoded_id text generated always as (rtrim(translate(encode(int4send(id # (-1587268393)), 'base64'), '+/', '-_'), '=')) stored,
  scheme_id integer constraint investment_events_scheme_id_foreign references schemes (id) on delete restrict,
  portfolio_id integer constraint investment_events_portfolio_id_foreign references portfolios (id) on delete restrict
);
create unique index investment_events_encoded_id_unique on investment_events (encoded_id);
create index investment_events_scheme_id_index on investment_events (scheme_id);
create index investment_events_portfolio_id_index on investment_events (portfolio_id);
create index investment_events_event_date_index on investment_events (event_date);

create table occupier_events (
  id serial primary key,
  event_date date not null,
  floor_area double precision,
  annual_rent double precision,
  currency text,
  lease_expiry_date date,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  encoded_id text generated always as (rtrim(translate(encode(int4send(id # (1010189199)), 'base64'), '+/', '-_'), '=')) stored,
  scheme_id integer not null constraint occupier_events_scheme_id_foreign references schemes (id) on delete restrict,
  company_id integer not null constraint occupier_events_company_id_foreign references companies (id) on delete restrict
);
create unique index occupier_events_encoded_id_unique on occupier_events (encoded_id);
create index occupier_events_scheme_id_index on occupier_events (scheme_id);
create index occupier_events_company_id_index on occupier_events (company_id);
create index occupier_events_event_date_index on occupier_events (event_date);
create index occupier_events_lease_expiry_date_index on occupier_events (lease_expiry_date);

create table scheme_market_boundaries (
  id serial primary key,
  geometry text not null,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  scheme_id integer not null
    constraint scheme_market_boundaries_scheme_id_foreign references schemes (id) on delete cascade,
  market_id integer not null
    constraint scheme_market_boundaries_market_id_foreign references markets (id) on delete restrict,
  position integer not null default 0
);
create index scheme_market_boundaries_scheme_id_index on scheme_market_boundaries (scheme_id);
create index scheme_market_boundaries_market_id_index on scheme_market_boundaries (market_id);

create table scheme_companies (
  id serial primary key,
  role text,
  percentage_share double precision,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  scheme_id integer not null constraint scheme_companies_scheme_id_foreign references schemes (id) on delete cascade,
  company_id integer not null constraint scheme_companies_company_id_foreign references companies (id) on delete restrict,
  position integer not null default 0
);
create index scheme_companies_scheme_id_index on scheme_companies (scheme_id);
create index scheme_companies_company_id_index on scheme_companies (company_id);

create table investment_companies (
  id serial primary key,
  role text,
  percentage_share double precision,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp,
  version integer not null default 1,
  investment_event_id integer not null
    constraint investment_companies_investment_event_id_foreign references investment_events (id) on delete cascade,
  company_id integer not null
    constraint investment_companies_company_id_foreign references companies (id) on delete restrict,
  position integer not null default 0
);
create index investment_companies_investment_event_id_index on investment_companies (investment_event_id);
create index investment_companies_company_id_index on investment_companies (company_id);

create table scheme_notes (
  id serial primary key,
  scheme_id integer not null constraint scheme_notes_scheme_id_foreign references schemes (id) on delete cascade,
  position integer not null default 0,
  text text not null,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
create index scheme_notes_scheme_id_position_index on scheme_notes (scheme_id, position);

create table scheme_tags (
  id serial primary key,
  scheme_id integer not null constraint scheme_tags_scheme_id_foreign references schemes (id) on delete cascade,
  position integer not null default 0,
  name text not null,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
create index scheme_tags_scheme_id_position_index on scheme_tags (scheme_id, position);

create table scheme_external_links (
  id serial primary key,
  scheme_id integer not null
    constraint scheme_external_links_scheme_id_foreign references schemes (id) on delete cascade,
  position integer not null default 0,
  url text not null,
  title text,
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
create index scheme_external_links_scheme_id_position_index on scheme_external_links (scheme_id, position);

create trigger schemes_touch before update on schemes for each row execute function touch_row();
create trigger addresses_touch before update on addresses for each row execute function touch_row();
create trigger companies_touch before update on companies for each row execute function touch_row();
create trigger building_types_touch before update on building_types for each row execute function touch_row();
create trigger developments_touch before update on developments for each row execute function touch_row();
create trigger development_types_touch before update on development_types for each row execute function touch_row();
create trigger development_statuses_touch before update on development_statuses
  for each row execute function touch_row();
create trigger markets_touch before update on markets for each row execute function touch_row();
create trigger countries_touch before update on countries for each row execute function touch_row();
create trigger investment_events_touch before update on investment_events for each row execute function touch_row();
create trigger occupier_events_touch before update on occupier_events for each row execute function touch_row();
create trigger portfolios_touch before update on portfolios for each row execute function touch_row();
create trigger scheme_market_boundaries_touch before update on scheme_market_boundaries
  for each row execute function touch_row();
create trigger scheme_companies_touch before update on scheme_companies for each row execute function touch_row();
create trigger investment_companies_touch before update on investment_companies
  for each row execute function touch_row();
`;

/** Children before the tables they point at. */
const TABLES = [
  'scheme_external_links',
  'scheme_tags',
  'scheme_notes',
  'investment_companies',
  'scheme_companies',
  'scheme_market_boundaries',
  'occupier_events',
  'investment_events',
  'portfolios',
  'developments',
  'schemes',
  'companies',
  'addresses',
  'markets',
  'development_statuses',
  'development_types',
  'building_types',
  'countries',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(UP);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw('drop table if exists ?? cascade', [table]);
  await knex.raw('drop function if exists touch_row()');
}
