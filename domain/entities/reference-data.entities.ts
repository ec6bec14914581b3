import type { EntityDefinition } from './entity-definition';
import { TIMESTAMP_FIELDS } from './entity-definition';

/** Small lookup entities: countries, markets and the three type/status lists. */

export const Country: EntityDefinition = {
  name: 'Country',
  route: 'Countries',
  description: 'A country.',
  table: 'countries',
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 200 },
    IsoCode: {
      kind: 'string',
      column: 'iso_code',
      required: true,
      pattern: '^[A-Z]{2}$',
      patternText: 'must be 2 upper-case letters',
      unique: true,
      description: 'ISO 3166-1 alpha-2 code.',
    },
    ...TIMESTAMP_FIELDS,
  },
  relations: {},
  collections: {},
  searchFields: { Name: 'Name' },
};

export const Market: EntityDefinition = {
  name: 'Market',
  route: 'Markets',
  description: 'A property market, usually a city or region.',
  table: 'markets',
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 200 },
    ...TIMESTAMP_FIELDS,
  },
  relations: { Country: { target: 'Country', column: 'country_id' } },
  collections: {},
  searchFields: { Name: 'Name' },
};

function namedLookup(name: string, route: string, table: string, description: string): EntityDefinition {
  return {
    name,
    route,
    description,
    table,
    acceptsBareIntegerKeys: false,
    storesEncodedId: false,
    fields: {
      Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 200, unique: true },
      ...TIMESTAMP_FIELDS,
    },
    relations: {},
    collections: {},
    searchFields: { Name: 'Name' },
  };
}

export const BuildingType = namedLookup(
  'BuildingType',
  'BuildingTypes',
  'building_types',
  'A kind of building (office, residential, …).',
);
export const DevelopmentType = namedLookup(
  'DevelopmentType',
  'DevelopmentTypes',
  'development_types',
  'A kind of development (new build, refurbishment, …).',
);
export const DevelopmentStatus = namedLookup(
  'DevelopmentStatus',
  'DevelopmentStatuses',
  'development_statuses',
  'A stage of a development (planned, under construction, complete, …).',
);
