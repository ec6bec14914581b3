import type { EntityDefinition, OwnedRecordDefinition } from './entity-definition';
import { PERCENTAGE_SHARE_FIELD, TIMESTAMP_FIELDS } from './entity-definition';

/** Schemes and what hangs off them: company links, developments, boundaries, notes, tags, links. */

export const Scheme: EntityDefinition = {
  name: 'Scheme',
  route: 'Schemes',
  description: 'A property-development scheme: a site or building project and what is known about it.',
  table: 'schemes',
  acceptsBareIntegerKeys: true,
  storesEncodedId: true,
  fields: {
    SchemeName: { kind: 'string', column: 'scheme_name', required: true, minLength: 1, maxLength: 300 },
    TotalUnits: { kind: 'integer', column: 'total_units', minimum: 0 },
    TotalFloorArea: { kind: 'number', column: 'total_floor_area', minimum: 0 },
    CompletionDate: { kind: 'date', column: 'completion_date' },
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    Address: { target: 'Address', column: 'address_id' },
    BuildingType: { target: 'BuildingType', column: 'building_type_id' },
    DevelopmentType: { target: 'DevelopmentType', column: 'development_type_id' },
    DevelopmentStatus: { target: 'DevelopmentStatus', column: 'development_status_id' },
    Market: { target: 'Market', column: 'market_id' },
    Country: { target: 'Country', column: 'country_id' },
  },
  collections: {
    Companies: { target: 'SchemeCompany', foreignKey: 'scheme_id', owned: true },
    Developments: { target: 'Development', foreignKey: 'scheme_id' },
    MarketBoundaries: {
      target: 'SchemeMarketBoundary',
      foreignKey: 'scheme_id',
      owned: true,
      alwaysPopulated: true,
      listForm: ['Market'],
    },
    Notes: { target: 'Note', foreignKey: 'scheme_id', owned: true, alwaysPopulated: true },
    Tags: { target: 'Tag', foreignKey: 'scheme_id', owned: true, alwaysPopulated: true },
    ExternalLinks: { target: 'ExternalLink', foreignKey: 'scheme_id', owned: true, alwaysPopulated: true },
  },
  searchFields: {
    SchemeName: 'SchemeName',
    AddressLine: 'Address/AddressLine',
    City: 'Address/City',
    Postcode: 'Address/Postcode',
    Company: 'Companies/Company/Name',
    Tag: 'Tags/Name',
    Note: 'Notes/Text',
  },
};

export const SchemeCompany: EntityDefinition = {
  name: 'SchemeCompany',
  route: 'SchemeCompanies',
  description: 'A company taking part in a scheme, in a role and with a share (owned by the Scheme).',
  table: 'scheme_companies',
  keepsWrittenOrder: true,
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Role: { kind: 'string', column: 'role', maxLength: 100 },
    PercentageShare: PERCENTAGE_SHARE_FIELD,
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    Scheme: { target: 'Scheme', column: 'scheme_id', required: true },
    Company: { target: 'Company', column: 'company_id', required: true },
  },
  collections: {},
  searchFields: {},
};

export const SchemeMarketBoundary: EntityDefinition = {
  name: 'SchemeMarketBoundary',
  route: 'SchemeMarketBoundaries',
  description: 'The boundary of a market a scheme lies in, as a geometry (owned by the Scheme).',
  table: 'scheme_market_boundaries',
  keepsWrittenOrder: true,
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Geometry: {
      kind: 'wkt',
      column: 'geometry',
      required: true,
      description: 'Well-known text (WKT) geometry.',
    },
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    Scheme: { target: 'Scheme', column: 'scheme_id', required: true },
    Market: { target: 'Market', column: 'market_id', required: true },
  },
  collections: {},
  searchFields: {},
};

export const Development: EntityDefinition = {
  name: 'Development',
  route: 'Developments',
  description: 'A phase or building of a scheme, with its own units, floor area and dates.',
  table: 'developments',
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 300 },
    Units: { kind: 'integer', column: 'units', minimum: 0 },
    FloorArea: { kind: 'number', column: 'floor_area', minimum: 0 },
    StartDate: { kind: 'date', column: 'start_date' },
    CompletionDate: { kind: 'date', column: 'completion_date' },
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    Scheme: { target: 'Scheme', column: 'scheme_id', required: true },
    DevelopmentType: { target: 'DevelopmentType', column: 'development_type_id' },
    DevelopmentStatus: { target: 'DevelopmentStatus', column: 'development_status_id' },
  },
  collections: {},
  searchFields: { Name: 'Name' },
};

/** Owned records: no route, no life outside their parent Scheme. Their Ids use their own type names. */
export const Note: OwnedRecordDefinition = {
  name: 'Note',
  table: 'scheme_notes',
  parent: 'Scheme',
  description: 'A free-text note on a scheme.',
  fields: { Text: { kind: 'string', column: 'text', required: true, minLength: 1, maxLength: 10000 } },
};

export const Tag: OwnedRecordDefinition = {
  name: 'Tag',
  table: 'scheme_tags',
  parent: 'Scheme',
  description: 'A label on a scheme.',
  fields: { Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 100 } },
};

export const ExternalLink: OwnedRecordDefinition = {
  name: 'ExternalLink',
  table: 'scheme_external_links',
  parent: 'Scheme',
  description: 'A link from a scheme to a page elsewhere.',
  fields: {
    Url: { kind: 'url', column: 'url', required: true, maxLength: 2000 },
    Title: { kind: 'string', column: 'title', maxLength: 300 },
  },
};
