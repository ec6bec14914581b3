import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { isWkt } from './wkt';

/**
 * The one ajv instance of a process: formats from ajv-formats (date, uri, …) plus `wkt`, and the
 * annotation keywords the schema builder attaches so error messages can be worded from the entity
 * definitions instead of ajv's generic English.
 */

/** Annotation keyword: what a schema node stands for (see write-schemas.ts). */
export const NODE_KEYWORD = 'x-node';

let instance: Ajv | undefined;

export function ajv(): Ajv {
  if (instance) return instance;
  const created = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true });
  addFormats(created, ['date', 'date-time', 'uri']);
  created.addFormat('wkt', { type: 'string', validate: isWkt });
  created.addKeyword(NODE_KEYWORD);
  instance = created;
  return created;
}
