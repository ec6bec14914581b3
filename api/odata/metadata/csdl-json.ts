import { csdlModel } from './csdl-model';
import type { MetadataSettings } from './metadata-settings';
import { EnumValue, PathValue, vocabularyUri } from './vocabularies';

/** `$metadata` as CSDL JSON (OData CSDL JSON format, `$Version` 4.0): the model with its values spelled as JSON. */

function plain(value: unknown): unknown {
  if (value instanceof EnumValue) return value.members.join(',');
  // A path in a value of a path-typed term's property is a plain string (as odata-csdl writes it).
  if (value instanceof PathValue) return value.path;
  if (Array.isArray(value)) return value.map(plain);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, plain(v)]));
}

export function csdlJson(settings: MetadataSettings): Record<string, unknown> {
  const model = csdlModel(settings);
  const references = model.$Reference as Record<string, unknown>;
  return plain({
    ...model,
    $Reference: Object.fromEntries(Object.entries(references).map(([ns, r]) => [vocabularyUri(ns, 'json'), r])),
  }) as Record<string, unknown>;
}
