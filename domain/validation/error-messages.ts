import type { ErrorObject } from 'ajv';
import type { ScalarField } from '../entities';
import { NODE_KEYWORD } from './ajv-instance';
import { memberPath } from '../json/member-path';
import type { SchemaNode } from './write-schemas';

/**
 * ajv errors as the strings of spec §7 rule 2: `<Entity.Path>: <message>`, with paths like
 * `Scheme.Companies[0].PercentageShare` and messages worded from the entity definitions.
 */

function rangeMessage(field: ScalarField, minimum: number | undefined, maximum: number | undefined): string {
  if (minimum !== undefined && maximum !== undefined) return `must be between ${minimum} and ${maximum}`;
  if (minimum !== undefined) return `must be at least ${minimum}`;
  if (maximum !== undefined) return `must be at most ${maximum}`;
  return `is out of range for ${field.kind}`;
}

const KIND_MESSAGES: Partial<Record<ScalarField['kind'], string>> = {
  date: 'must be a date (YYYY-MM-DD)',
  datetime: 'must be a date and time (ISO 8601)',
  url: 'must be an absolute http(s) URL',
  wkt: 'must be WKT geometry text',
  stringList: 'must be an array of strings',
};

function typeMessageOfField(field: ScalarField): string {
  switch (field.kind) {
    case 'integer':
      return 'must be an integer';
    case 'number':
      return 'must be a number';
    case 'string':
      return 'must be a string';
    default:
      return KIND_MESSAGES[field.kind]!;
  }
}

function typeMessage(n: SchemaNode, atRoot: boolean): string {
  switch (n.kind) {
    case 'field':
      return typeMessageOfField(n.field);
    case 'relation':
      return n.relation.required ? 'must be an object with an Id' : 'must be an object with an Id, or null';
    case 'collection':
      return 'must be an array';
    case 'relationId':
    case 'itemId':
      return 'must be a string';
    case 'object':
      return atRoot ? 'must be a JSON object' : 'must be an object';
  }
}

function fieldMessage(error: ErrorObject, field: ScalarField): string {
  const schema = error.parentSchema as Record<string, unknown>;
  switch (error.keyword) {
    case 'minimum':
    case 'maximum':
      return rangeMessage(field, schema.minimum as number | undefined, schema.maximum as number | undefined);
    case 'minLength':
      return field.minLength === 1 ? 'must not be empty' : `must be at least ${field.minLength} characters`;
    case 'maxLength':
      return `must be at most ${field.maxLength} characters`;
    case 'format':
      if (field.kind === 'wkt') return 'is not valid WKT';
      return KIND_MESSAGES[field.kind] ?? 'has an invalid format';
    case 'pattern':
      return KIND_MESSAGES[field.kind] ?? field.patternText ?? 'has an invalid format';
    default:
      return error.message ?? 'is invalid';
  }
}

function messageOf(error: ErrorObject): { path: string; message: string } {
  const n = (error.parentSchema as Record<string, unknown> | undefined)?.[NODE_KEYWORD] as SchemaNode | undefined;
  switch (error.keyword) {
    case 'required':
      return {
        path: `${error.instancePath}/${(error.params as { missingProperty: string }).missingProperty}`,
        message: 'is required',
      };
    case 'additionalProperties':
      return {
        path: `${error.instancePath}/${(error.params as { additionalProperty: string }).additionalProperty}`,
        message: 'is not a known field',
      };
    case 'type': {
      // A required member given as null is as good as missing.
      const required = n?.kind === 'field' ? n.field.required : n?.kind === 'relation' ? n.relation.required : false;
      if (error.data === null && required) return { path: error.instancePath, message: 'is required' };
      const message = n ? typeMessage(n, error.instancePath === '') : (error.message ?? 'has the wrong type');
      return { path: error.instancePath, message };
    }
    default:
      if (n?.kind === 'field') return { path: error.instancePath, message: fieldMessage(error, n.field) };
      return { path: error.instancePath, message: error.message ?? 'is invalid' };
  }
}

/** The messages of a failed validation, in ajv's order, one per path and wording. */
export function validationMessages(entityName: string, errors: readonly ErrorObject[]): string[] {
  const out: string[] = [];
  for (const error of errors) {
    const { path, message } = messageOf(error);
    const text = `${entityName}${memberPath(path)}: ${message}`;
    if (!out.includes(text)) out.push(text);
  }
  return out;
}
