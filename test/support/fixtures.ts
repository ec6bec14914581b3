import type { Knex } from 'knex';
import { encodeId } from '../../domain/ids/id-codec';

/**
 * A small, fully known data set inserted straight into a test database, for read tests that must
 * not depend on the write pipeline. Returns the integer keys so tests can compute encoded Ids.
 */
export interface ReadFixture {
  countries: Record<string, number>;
  addresses: number[];
  companies: number[];
  schemes: number[];
  markets: number[];
  developments: number[];
  portfolio: number;
  investmentEvents: number[];
}

async function ids(knex: Knex, table: string, rows: Record<string, unknown>[]): Promise<number[]> {
  const out = (await knex(table).insert(rows).returning('id')) as { id: number }[];
  return out.map((r) => r.id);
}

export async function insertReadFixture(knex: Knex): Promise<ReadFixture> {
  const countryRows = (await knex('countries').select('id', 'iso_code')) as { id: number; iso_code: string }[];
  const countries = Object.fromEntries(countryRows.map((c) => [c.iso_code, c.id]));
  const markets = ((await knex('markets').select('id').orderBy('id')) as { id: number }[]).map((m) => m.id);
  const addresses = await ids(knex, 'addresses', [
    { address_line: '1 High Street', city: 'London', postcode: 'EC1A 1AA', country_id: countries.GB },
    { address_line: '2 Quay Road', city: 'Dublin', postcode: 'D02', country_id: countries.IE },
    { address_line: "3 O'Brien Way", city: 'london', postcode: null, country_id: null },
  ]);
  const companies = await ids(knex, 'companies', [
    { name: 'Acme Holdings', registration_number: 'AC1', country_id: countries.GB },
    { name: 'Beta 100% Capital_', registration_number: null },
    { name: 'Gamma Partners', registration_number: 'GP9', country_id: countries.IE },
  ]);
  const schemes = await ids(knex, 'schemes', [
    {
      scheme_name: 'Alpha Tower',
      address_id: addresses[0],
      total_units: 120,
      total_floor_area: 5000.5,
      completion_date: '2024-03-31',
      market_id: markets[0],
    },
    { scheme_name: 'Beta Yard', address_id: addresses[1], total_units: 40, completion_date: '2022-01-15' },
    { scheme_name: 'Gamma Works', address_id: null, total_units: null, completion_date: null },
    { scheme_name: "x'; DROP TABLE schemes;--", address_id: addresses[2], total_units: 0 },
  ]);
  await knex('scheme_companies').insert([
    { scheme_id: schemes[0], company_id: companies[0], role: 'Developer', percentage_share: 0.5, position: 0 },
    { scheme_id: schemes[0], company_id: companies[1], role: 'Investor', percentage_share: 0.3, position: 1 },
    { scheme_id: schemes[0], company_id: companies[2], role: 'Lender', percentage_share: 0.2, position: 2 },
    { scheme_id: schemes[1], company_id: companies[1], role: 'Developer', percentage_share: 1, position: 0 },
  ]);
  await knex('scheme_notes').insert([
    { scheme_id: schemes[0], text: 'second', position: 1 },
    { scheme_id: schemes[0], text: 'first', position: 0 },
  ]);
  await knex('scheme_tags').insert([{ scheme_id: schemes[0], name: 'flagship', position: 0 }]);
  await knex('scheme_external_links').insert([
    { scheme_id: schemes[1], url: 'https://example.com/beta', title: 'Beta', position: 0 },
  ]);
  await knex('scheme_market_boundaries').insert([
    { scheme_id: schemes[0], market_id: markets[0], geometry: 'POLYGON((0 0, 1 0, 1 1, 0 0))', position: 0 },
  ]);
  const developments = await ids(knex, 'developments', [
    { name: 'Phase 1', scheme_id: schemes[0], units: 60 },
    { name: 'Phase 2', scheme_id: schemes[0], units: 60 },
  ]);
  const [portfolio] = await ids(knex, 'portfolios', [{ name: 'Core Fund' }]);
  const investmentEvents = await ids(knex, 'investment_events', [
    { event_date: '2023-06-01', scheme_id: schemes[0], portfolio_id: portfolio, price: 1000000, currency: 'GBP' },
    { event_date: '2024-01-10', scheme_id: schemes[1], portfolio_id: portfolio, price: 250000, currency: 'EUR' },
  ]);
  await knex('investment_companies').insert([
    {
      investment_event_id: investmentEvents[0],
      company_id: companies[0],
      role: 'Buyer',
      percentage_share: 1,
      position: 0,
    },
  ]);
  return { countries, addresses, companies, schemes, markets, developments, portfolio: portfolio!, investmentEvents };
}

export const enc = encodeId;
