import type { EntityDefinition } from './entity-definition';
import { TIMESTAMP_FIELDS } from './entity-definition';

/** Places and organisations: addresses and companies. */

export const Address: EntityDefinition = {
  name: 'Address',
  route: 'Addresses',
  table: 'addresses',
  acceptsBareIntegerKeys: true,
  storesEncodedId: true,
  fields: {
    AddressLine: { kind: 'string', column: 'address_line', required: true, minLength: 1, maxLength: 500 },
    City: { kind: 'string', column: 'city', maxLength: 200 },
    Region: { kind: 'string', column: 'region', maxLength: 200 },
    Postcode: { kind: 'string', column: 'postcode', maxLength: 20 },
    Latitude: { kind: 'number', column: 'latitude', minimum: -90, maximum: 90 },
    Longitude: { kind: 'number', column: 'longitude', minimum: -180, maximum: 180 },
    ...TIMESTAMP_FIELDS,
  },
  relations: { Country: { target: 'Country', column: 'country_id' } },
  collections: {},
  searchFields: { AddressLine: 'AddressLine', City: 'City', Postcode: 'Postcode' },
};

export const Company: EntityDefinition = {
  name: 'Company',
  route: 'Companies',
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
