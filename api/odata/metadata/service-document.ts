import { SET_SOURCES } from './csdl-model';

/** The service document (`GET /odata/`): the entity sets, each at its name below the service root. */
export interface ServiceDocument {
  '@odata.context': string;
  value: { name: string; kind: 'EntitySet'; url: string }[];
}

/** `baseUrl`: the absolute service root (`http://localhost:3000/odata`), with or without its final slash. */
export function serviceDocument(baseUrl: string): ServiceDocument {
  return {
    '@odata.context': `${baseUrl.replace(/\/+$/, '')}/$metadata`,
    value: SET_SOURCES.map((entity) => ({ name: entity.route, kind: 'EntitySet', url: entity.route })),
  };
}
