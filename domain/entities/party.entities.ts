import type { EntityDefinition } from './entity-definition';
import { TIMESTAMP_FIELDS } from './entity-definition';

/** Places and organisations: addresses and companies. */

export const Address: EntityDefinition = {
  name: 'Address',
  route: 'Addresses',
  description: 'A postal address with its coordinates.',
  table: 'addresses',
  acceptsBareIntegerKeys: true,
  storesEncodedId: true,
  fields: {
    AddressLine: { kind: 'string', column: 'address_line', required: true, minLength: 1, maxLength: 500 },
    City: { kind: 'string', column: 'city', maxLength: 200 },
    Region: { kind: 'string', column: 'region', maxLength: 200 },
    Postcode: { kind: 'string', column: 'postcode', maxLength: 20 },
    Latitude: { kind: 'number', column: 'latitude', minimum: -90, maximum: 90, description: 'WGS 84 degrees.' },
    Longitude: { kind: 'number', column: 'longitude', minimum: -180, maximum: 180, description: 'WGS 84 degrees.' },
    ...TIMESTAMP_FIELDS,
  },
  relations: { Country: { target: 'Country', column: 'country_id' } },
  collections: {},
  searchFields: { AddressLine: 'AddressLine', City: 'City', Postcode: 'Postcode' },
};

export const Company: EntityDefinition = {
  name: 'Company',
  route: 'Companies',
  description: 'An organisation: developer, investor, occupier, adviser.',
  table: 'companies',
  acceptsBareIntegerKeys: false,
  storesEncodedId: false,
  fields: {
    Name: { kind: 'string', column: 'name', required: true, minLength: 1, maxLength: 300 },
    RegistrationNumber: { kind: 'string', column: 'registration_number', maxLength: 50 },
    Website: { kind: 'url', column: 'website', maxLength: 2000 },
    ...TIMESTAMP_FIELDS,
  },
  relations: { Country: { target: 'Country', column: 'country_id' } },
  collections: {},
  searchFields: { Name: 'Name', RegistrationNumber: 'RegistrationNumber' },
};
