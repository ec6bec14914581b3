import type { EntityDefinition } from './entity-definition';
import { PERCENTAGE_SHARE_FIELD, TIMESTAMP_FIELDS } from './entity-definition';

/** Transactions over schemes: investment and occupier events, grouped into portfolios. */

const CURRENCY = {
  pattern: '^[A-Z]{3}$',
  patternText: 'must be 3 upper-case letters',
  description: 'ISO 4217 currency code.',
};

export const InvestmentEvent: EntityDefinition = {
  name: 'InvestmentEvent',
  route: 'InvestmentEvents',
  description: 'A sale or purchase of a scheme or portfolio, at a price on a date.',
  table: 'investment_events',
  acceptsBareIntegerKeys: true,
  storesEncodedId: true,
  fields: {
    EventDate: { kind: 'date', column: 'event_date', required: true },
    Price: { kind: 'number', column: 'price', minimum: 0 },
    Currency: { kind: 'string', column: 'currency', ...CURRENCY },
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    Scheme: { target: 'Scheme', column: 'scheme_id' },
    Portfolio: { target: 'Portfolio', column: 'portfolio_id' },
  },
  collections: {
    Companies: { target: 'InvestmentCompany', foreignKey: 'investment_event_id', owned: true },
  },
  searchFields: {},
};

export const InvestmentCompany: EntityDefinition = {
  name: 'InvestmentCompany',
  route: 'InvestmentCompanies',
  description: 'A company taking part in an investment event (owned by the InvestmentEvent).',
  table: 'investment_companies',
  keepsWrittenOrder: true,
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Role: {
      kind: 'string',
      column: 'role',
      maxLength: 100,
      description: 'The part it played, e.g. Buyer, Seller or Advisor.',
    },
    PercentageShare: PERCENTAGE_SHARE_FIELD,
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    InvestmentEvent: { target: 'InvestmentEvent', column: 'investment_event_id', required: true },
    Company: { target: 'Company', column: 'company_id', required: true },
  },
  collections: {},
  searchFields: {},
};

export const OccupierEvent: EntityDefinition = {
  name: 'OccupierEvent',
  route: 'OccupierEvents',
  description: 'A letting: a company occupying space in a scheme, with its rent and lease expiry.',
  table: 'occupier_events',
  acceptsBareIntegerKeys: true,
  storesEncodedId: true,
  fields: {
    EventDate: { kind: 'date', column: 'event_date', required: true },
    FloorArea: { kind: 'number', column: 'floor_area', minimum: 0 },
    AnnualRent: { kind: 'number', column: 'annual_rent', minimum: 0 },
    Currency: { kind: 'string', column: 'currency', ...CURRENCY },
    LeaseExpiryDate: { kind: 'date', column: 'lease_expiry_date' },
    ...TIMESTAMP_FIELDS,
  },
  relations: {
    Scheme: { target: 'Scheme', column: 'scheme_id', required: true },
    Company: { target: 'Company', column: 'company_id', required: true },
  },
  collections: {},
  searchFields: {},
};

export const Portfolio: EntityDefinition = {
  name: 'Portfolio',
  route: 'Portfolios',
  description: 'A named group of investment events.',
  table: 'portfolios',
  acceptsBareIntegerKeys: true,
  storesEncodedId: true,
  fields: {
    Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 300 },
    Description: { kind: 'string', column: 'description', maxLength: 5000 },
    ...TIMESTAMP_FIELDS,
  },
  relations: {},
  collections: {
    InvestmentEvents: { target: 'InvestmentEvent', foreignKey: 'portfolio_id' },
  },
  searchFields: { Name: 'Name' },
};
