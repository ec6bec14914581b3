import type { EntityDefinition, ScalarField } from '../entities';
import { memberPath } from '../json/member-path';
import { ownedCollectionsOf, type OwnedItemType } from './ownership';

/**
 * Geometry is bounded by length, vertices and nesting (DESIGN §13) in one linear pass, before the
 * WKT grammar or anything else reads it: the API (bodies, `$batch` bodies, JSON Patch values) and
 * the command worker (the body it applies, a patched document) check the same limits.
 */

export interface GeometryLimits {
  /** MAX_GEOMETRY_LENGTH: characters of one geometry text. */
  maxLength: number;
  /** MAX_GEOMETRY_VERTICES: coordinates in one geometry, all its parts together. */
  maxVertices: number;
  /** MAX_GEOMETRY_DEPTH: levels of parentheses (a MULTIPOLYGON has 3). */
  maxDepth: number;
}

export const DEFAULT_GEOMETRY_LIMITS: GeometryLimits = { maxLength: 500_000, maxVertices: 50_000, maxDepth: 8 };

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** A digit, sign or point: what a coordinate's first ordinate starts with. */
function startsNumber(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || code === 0x2b || code === 0x2d || code === 0x2e;
}

/**
 * What `text` breaks of the limits, worded for a problem, or null. A coordinate is a number right
 * after `(` or `,` (spaces between): exact for WKT, a count of tokens for anything else.
 */
export function geometryLimitBreach(text: string, limits: GeometryLimits): string | null {
  if (text.length > limits.maxLength) {
    return `is ${text.length} characters long, more than the limit of ${limits.maxLength} (MAX_GEOMETRY_LENGTH)`;
  }
  let depth = 0;
  let vertices = 0;
  let coordinateMayStart = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x28) {
      depth += 1;
      if (depth > limits.maxDepth) {
        return `nests parentheses more than ${limits.maxDepth} levels deep, the limit (MAX_GEOMETRY_DEPTH)`;
      }
      coordinateMayStart = true;
    } else if (code === 0x29) {
      depth -= 1;
      coordinateMayStart = false;
    } else if (code === 0x2c) {
      coordinateMayStart = true;
    } else if (!isSpace(code)) {
      if (coordinateMayStart && startsNumber(code) && ++vertices > limits.maxVertices) {
        return `has more than ${limits.maxVertices} vertices, the limit (MAX_GEOMETRY_VERTICES)`;
      }
      coordinateMayStart = false;
    }
  }
  return null;
}

interface Shape {
  fields: Record<string, ScalarField>;
  /** Owned collections and their item type (an item's own geometry fields). */
  collections: Record<string, OwnedItemType>;
}

function entityShape(entity: EntityDefinition): Shape {
  return {
    fields: entity.fields,
    collections: Object.fromEntries(ownedCollectionsOf(entity).map((o) => [o.name, o.item])),
  };
}

function itemShape(item: OwnedItemType): Shape {
  return { fields: item.fields, collections: {} };
}

function isGeometryField(shape: Shape, name: string): boolean {
  return Object.hasOwn(shape.fields, name) && shape.fields[name]!.kind === 'wkt';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Found = (pointer: string, breach: string) => void;

function checkText(value: unknown, pointer: string, limits: GeometryLimits, found: Found): void {
  if (typeof value !== 'string') return;
  const breach = geometryLimitBreach(value, limits);
  if (breach) found(pointer, breach);
}

function checkItems(item: OwnedItemType, value: unknown, pointer: string, limits: GeometryLimits, found: Found) {
  if (!Array.isArray(value)) return;
  value.forEach((v, i) => checkObject(itemShape(item), v, `${pointer}/${i}`, limits, found));
}

function checkObject(shape: Shape, value: unknown, pointer: string, limits: GeometryLimits, found: Found): void {
  if (!isObject(value)) return;
  for (const [name, field] of Object.entries(shape.fields)) {
    if (field.kind === 'wkt' && Object.hasOwn(value, name)) checkText(value[name], `${pointer}/${name}`, limits, found);
  }
  for (const [name, item] of Object.entries(shape.collections)) {
    if (Object.hasOwn(value, name)) checkItems(item, value[name], `${pointer}/${name}`, limits, found);
  }
}

function message(entity: EntityDefinition, pointer: string, breach: string): string {
  return `${entity.name}${memberPath(pointer)}: ${breach}`;
}

/** Every geometry of a write body (POST, PUT, a patched document) past a limit, as messages. */
export function geometryLimitErrors(entity: EntityDefinition, raw: unknown, limits: GeometryLimits): string[] {
  const errors: string[] = [];
  checkObject(entityShape(entity), raw, '', limits, (pointer, breach) => errors.push(message(entity, pointer, breach)));
  return errors;
}

/**
 * The same for a JSON Patch value put at `segments` (`/MarketBoundaries/0/Geometry`, an item at
 * `/MarketBoundaries/-`, the whole collection, or the whole document).
 */
export function geometryLimitErrorsAt(
  entity: EntityDefinition,
  segments: readonly string[],
  value: unknown,
  limits: GeometryLimits,
): string[] {
  const errors: string[] = [];
  const found: Found = (pointer, breach) => errors.push(message(entity, pointer, breach));
  const [first, second, third] = segments;
  const pointer = segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  const shape = entityShape(entity);
  if (first === undefined) checkObject(shape, value, '', limits, found);
  else if (segments.length === 1 && isGeometryField(shape, first)) checkText(value, pointer, limits, found);
  else if (Object.hasOwn(shape.collections, first)) {
    const item = shape.collections[first]!;
    if (second === undefined) checkItems(item, value, pointer, limits, found);
    else if (third === undefined) checkObject(itemShape(item), value, pointer, limits, found);
    else if (segments.length === 3 && isGeometryField(itemShape(item), third)) checkText(value, pointer, limits, found);
  }
  return errors;
}
