import type { PatchOperation } from '../../domain/commands/command';
import { entityByName, READ_ONLY_MEMBERS, type EntityDefinition, type RelationField } from '../../domain/entities';
import { validationFailed } from '../../domain/errors/domain-error';
import { assertIdMatchesKey } from '../../domain/validation/write-body';
import { splitKeyPredicate } from '../../domain/odata/key-predicate';
import { ownedCollectionsOf, type OwnedCollection } from '../../domain/writes/ownership';
import { ODATA_ROOT } from '../routes/route-table';
import { complexTypeNameOf, isComplexCollection, qualified } from './metadata/structured-types';

/**
 * An OData JSON write body (DESIGN §17) in the root's write form (DESIGN §4), so that the root's
 * validation, limits and commands apply unchanged: `"Address@odata.bind": "Addresses('k')"` becomes
 * `"Address": {"Id": "k"}`, control information (`@odata.type`, `@odata.etag`, …) and instance
 * annotations are dropped (`@odata.type` must name the set's type), the owned collections' items
 * are read the same way. A PATCH object (merge) becomes the JSON Patch operations that make the same
 * change (`add` of each named member), so it is the same command as the root's JSON Patch.
 */

const READ_ONLY = new Set<string>(READ_ONLY_MEMBERS);
const BIND = 'odata.bind';
/** Messages in one answer, as for unstorable text (domain/json/storable-json.ts): a body of bad binds cannot grow it. */
const MAX_ERRORS = 20;

const refused = (errors: string[]) => validationFailed(errors.slice(0, MAX_ERRORS));

/** What an object of the body is: the entity or an item of one of its owned collections. */
interface Shape {
  /** The path its messages start with: `Scheme`, `Scheme.Companies[0]`. */
  at: string;
  /** Its type as `@odata.type` names it (`Scheme`, `Note`, `SchemeMarketBoundaryItem`). */
  typeName: string;
  relations: Record<string, RelationField>;
  owned: readonly OwnedCollection[];
  /** Collections no body writes (written through their own set). */
  collections: readonly string[];
}

/** Sets a member as JSON.parse made it: `__proto__` too stays a plain member (and an unknown field). */
function put(out: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * The key an entity URL names in the set `set`: `Addresses('k')`, `Addresses(Id='k')`,
 * `Addresses/k`, each also under the service root (`/odata/Addresses('k')`,
 * `http://host/odata/Addresses('k')`; the host is not compared: proxies rename it). A `$<id>`
 * reference (a batch's Content-ID) stays as it is: the batch resolves it as the root's `{Id: "$id"}`.
 * Null when it names nothing of `set`.
 */
function boundKeyOf(url: string, set: string): string | null {
  if (/^\$[^/()]+$/.test(url)) return url;
  if (/[?#]/.test(url)) return null;
  let path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  if (path.startsWith('/')) {
    if (path.slice(0, ODATA_ROOT.length + 1).toLowerCase() !== `${ODATA_ROOT}/`) return null;
    path = path.slice(ODATA_ROOT.length + 1);
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return null;
  const segments: string[] = [];
  for (const raw of path.split('/')) {
    const segment = decoded(raw);
    if (segment === null) return null;
    segments.push(...splitKeyPredicate(segment));
  }
  const [named, key, ...rest] = segments;
  return named === set && key !== undefined && key !== '' && rest.length === 0 ? key : null;
}

function shapeOfEntity(entity: EntityDefinition): Shape {
  const owned = ownedCollectionsOf(entity);
  return {
    at: entity.name,
    typeName: entity.name,
    relations: entity.relations,
    owned,
    collections: Object.keys(entity.collections).filter((name) => !owned.some((o) => o.name === name)),
  };
}

function shapeOfItem(parent: Shape, owned: OwnedCollection, index: number): Shape {
  return {
    at: `${parent.at}.${owned.name}[${index}]`,
    typeName: isComplexCollection(owned.collection) ? complexTypeNameOf(owned.collection) : owned.item.name,
    relations: owned.item.relations,
    owned: [],
    collections: [],
  };
}

/** `@odata.type` of an object: its type, qualified or not, with or without a context URL before `#`. */
function typeMatches(value: unknown, typeName: string): boolean {
  if (typeof value !== 'string') return false;
  const named = value.slice(value.lastIndexOf('#') + 1);
  return named === qualified(typeName) || named === typeName;
}

/** A relation value given as an entity reference (`{"@odata.id": "Addresses('k')"}`) or `{Id, …}` with annotations. */
function relationValue(shape: Shape, name: string, value: unknown, errors: string[]): unknown {
  if (!isObject(value)) return value;
  const target = entityByName(shape.relations[name]!.target).route;
  const out: Record<string, unknown> = {};
  for (const [member, inner] of Object.entries(value)) {
    if (member === '@odata.id' && value.Id === undefined) {
      const key = typeof inner === 'string' ? boundKeyOf(inner, target) : null;
      if (key === null) errors.push(`${shape.at}.${name}: @odata.id must name an entity of ${target}`);
      else out.Id = key;
    } else if (!member.includes('@')) put(out, member, inner);
  }
  return out;
}

/** One object of the body in the root's form; every message of what cannot be read goes to `errors`. */
function translateObject(shape: Shape, body: Record<string, unknown>, errors: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [member, value] of Object.entries(body)) {
    const at = member.indexOf('@');
    if (at === 0) {
      // Control information and instance annotations of the object: only its type is checked.
      if (member === '@odata.type' && !typeMatches(value, shape.typeName)) {
        errors.push(`${shape.at}.@odata.type: must be #${qualified(shape.typeName)}`);
      }
      continue;
    }
    if (at > 0) {
      const name = member.slice(0, at);
      if (member.slice(at + 1) !== BIND) continue; // annotations of a property (`Name@odata.type`)
      bindInto(shape, name, value, body, out, errors);
      continue;
    }
    if (Object.hasOwn(shape.relations, member)) {
      put(out, member, relationValue(shape, member, value, errors));
      continue;
    }
    const owned = shape.owned.find((o) => o.name === member);
    const items =
      owned && Array.isArray(value)
        ? value.map((item, i) =>
            isObject(item) ? translateObject(shapeOfItem(shape, owned, i), item, errors) : (item as unknown),
          )
        : value;
    put(out, member, items);
  }
  return out;
}

/** `Name@odata.bind`: a single-valued navigation property set to the entity the URL names (or null). */
function bindInto(
  shape: Shape,
  name: string,
  value: unknown,
  body: Record<string, unknown>,
  out: Record<string, unknown>,
  errors: string[],
): void {
  const where = `${shape.at}.${name}@${BIND}`;
  if (!Object.hasOwn(shape.relations, name)) {
    const collection = shape.collections.includes(name) || shape.owned.some((o) => o.name === name);
    errors.push(
      collection
        ? `${where}: ${name} cannot be bound; write its entities through their own set or inline`
        : `${where}: ${name} is not a navigation property of ${shape.typeName}`,
    );
    return;
  }
  if (Object.hasOwn(body, name)) {
    errors.push(`${where}: give ${name} either as a value or bound, not both`);
    return;
  }
  if (value === null) {
    put(out, name, null);
    return;
  }
  const target = entityByName(shape.relations[name]!.target).route;
  const key = typeof value === 'string' ? boundKeyOf(value, target) : null;
  if (key === null) {
    errors.push(`${where}: must name an entity of ${target}, as ${target}('<Id>')`);
    return;
  }
  put(out, name, { Id: key });
}

/**
 * A POST or PUT body in the root's form; what is not an object is left for the root's validation
 * to name. Throws 400 listing every bind or annotation it cannot read.
 */
export function rootBodyOf(entity: EntityDefinition, body: unknown): unknown {
  if (!isObject(body)) return body;
  const errors: string[] = [];
  const out = translateObject(shapeOfEntity(entity), body, errors);
  if (errors.length) throw refused(errors);
  return out;
}

/** RFC 6901: `~` and `/` in a member name. */
const pointerOf = (name: string) => `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * The JSON Patch operations of a PATCH object (OData's merge): `add` of each member it names, in
 * its order (`add` sets a member whether or not the document has it; an owned collection given is
 * replaced as a whole; null clears). Read-only members are left out as in a PUT body, except an `Id`
 * that contradicts the URL (the root's message, from its validation of the patched document). A
 * member the type does not have is the root's `is not a known field`, said before anything is queued.
 */
export function mergeOperationsOf(entity: EntityDefinition, body: unknown, key?: number): PatchOperation[] {
  if (!isObject(body)) throw validationFailed([`${entity.name}: must be a JSON object`]);
  const errors: string[] = [];
  const translated = translateObject(shapeOfEntity(entity), body, errors);
  if (errors.length) throw refused(errors);
  if (key !== undefined) assertIdMatchesKey(entity, translated, key);
  const operations: PatchOperation[] = [];
  for (const [name, value] of Object.entries(translated)) {
    const field = Object.hasOwn(entity.fields, name) ? entity.fields[name] : undefined;
    const known = field || Object.hasOwn(entity.relations, name) || Object.hasOwn(entity.collections, name);
    if (!known && name !== 'Id') errors.push(`${entity.name}.${name}: is not a known field`);
    else if (!READ_ONLY.has(name) && !field?.readOnly) operations.push({ op: 'add', path: pointerOf(name), value });
  }
  if (errors.length) throw refused(errors);
  return operations;
}
