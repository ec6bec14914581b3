import { GENERATED_MODEL, type Member, type ODataModel, type StructuredType } from './odata-model';
import { shapeOfUrl, shapeWithin, type Shape } from './odata-query-shape';

/** An answer as received (the contract check's Exchange). */
interface Received {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The OData side of the contract check (DESIGN §17), as the OpenAPI side checks the root: every
 * answer under `/odata` carries `OData-Version`; an error is the OData JSON error body; a read is
 * checked against the CSDL JSON `$metadata` (the one the service serves, test/support/stack.ts, or
 * the generated one): only members of the type the URL names, each of its Edm type (and MaxLength),
 * every non-nullable property present and not null (those `$select` leaves out excepted),
 * navigation properties only where `$expand` asks for them, with their cardinality, as their target
 * type; control information well formed and as the metadata level says. Any break throws.
 */

type Json = Record<string, unknown>;
type Fail = (message: string) => never;
type Level = 'minimal' | 'none' | 'full';

/**
 * The one documented exception to "non-nullable means present" (docs/odata.md, Decisions: complex
 * items): in a list, a Scheme's MarketBoundaries items come in the root's reduced form `{Id, Market}`
 * (no large Geometry, no timestamps: absent, not null). What a list form shows, by type.
 */
const LIST_FORMS: Readonly<Record<string, readonly string[]>> = { SchemeMarketBoundaryItem: ['Id', 'Market'] };

const DATE = /^-?\d{4,}-\d\d-\d\d$/;
const DATE_TIME = /^-?\d{4,}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;
const ENTITY_TAG = /^(W\/)?"[^"]*"$/;

/** What a path under `/odata` answers: a collection or one entity of a type, a count, or something else. */
type Target =
  | { kind: 'collection'; type: string }
  | { kind: 'entity'; type: string }
  /** A complex collection property of one entity (`Schemes('k')/Notes`): its items' type. */
  | { kind: 'property'; type: string }
  | { kind: 'count' }
  | { kind: 'service' }
  | { kind: 'metadata' };

const PREDICATE = /^([A-Za-z_]\w*)\((.*)\)$/s;

const unqualified = (model: ODataModel, type: string) =>
  type.startsWith(`${model.namespace}.`) ? type.slice(model.namespace.length + 1) : undefined;

/** The resource path, read independently of the service's own matcher. */
export function targetOf(path: string, model: ODataModel = GENERATED_MODEL): Target | undefined {
  const pathname = new URL(`http://service${path}`).pathname.replace(/\/$/, '');
  const segments = pathname
    .split('/')
    .slice(2)
    .flatMap((s) => {
      const decoded = decodeURIComponent(s);
      const predicate = PREDICATE.exec(decoded);
      return predicate ? [predicate[1]!, `(${predicate[2]!})`] : [decoded];
    });
  if (segments.length === 0) return { kind: 'service' };
  if (segments[0] === '$metadata') return { kind: 'metadata' };
  const [set, key, nav, more, rest] = segments;
  const type = model.sets.get(set!);
  if (!type) return undefined;
  if (key === undefined) return { kind: 'collection', type };
  if (key === '$count') return nav === undefined ? { kind: 'count' } : undefined;
  if (nav === undefined) return { kind: 'entity', type };
  const member = model.types.get(type)?.members.get(nav);
  if (!member || rest !== undefined) return undefined;
  const target = unqualified(model, member.type);
  if (member.kind === 'Property') {
    if (!member.collection || !target || model.types.get(target)?.kind !== 'ComplexType') return undefined;
    if (more === undefined) return { kind: 'property', type: target };
    return more === '$count' ? { kind: 'count' } : undefined;
  }
  // A member of a navigation collection by key: `Schemes('k')/Developments('d')` (or `/Developments/d`).
  if (more !== undefined && member.collection && more !== '$count') return { kind: 'entity', type: target! };
  if (more !== undefined) return more === '$count' && member.collection ? { kind: 'count' } : undefined;
  return member.collection ? { kind: 'collection', type: target! } : { kind: 'entity', type: target! };
}

function checkScalar(member: Member, value: unknown, at: string, fail: Fail): void {
  const { type } = member;
  const not = () => fail(`${at}: ${JSON.stringify(value)} is not an ${type}`);
  switch (type) {
    case 'Edm.String':
      if (typeof value !== 'string') not();
      if (member.maxLength !== undefined && [...(value as string)].length > member.maxLength)
        fail(`${at}: longer than its MaxLength ${member.maxLength}`);
      return;
    case 'Edm.Int32':
      if (!Number.isInteger(value) || (value as number) < -(2 ** 31) || (value as number) >= 2 ** 31) not();
      return;
    case 'Edm.Double':
    case 'Edm.Decimal':
      if (typeof value !== 'number' && !['NaN', 'INF', '-INF'].includes(value as string)) not();
      return;
    case 'Edm.Boolean':
      if (typeof value !== 'boolean') not();
      return;
    case 'Edm.Date':
      if (typeof value !== 'string' || !DATE.test(value)) not();
      return;
    case 'Edm.DateTimeOffset':
      if (typeof value !== 'string' || !DATE_TIME.test(value)) not();
      return;
    default:
      fail(`${at}: the metadata has a type ${type} this check does not know`);
  }
}

function isAbsoluteUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Where a value sits: the metadata level, whether it is part of a list answer, the model. */
interface Context {
  model: ODataModel;
  level: Level;
  list: boolean;
  fail: Fail;
}

/** The control information of an entity (`@odata.etag`, and with `full` its id, edit link and type). */
function checkControl(type: StructuredType, value: Json, at: string, cx: Context): void {
  const { fail } = cx;
  const present = Object.keys(value).filter((name) => name.startsWith('@'));
  if (type.kind === 'ComplexType' && present.length > 0) fail(`${at}: a complex value carries no control information`);
  for (const name of present) {
    const v = value[name];
    const where = `${at}.${name}`;
    if (cx.level === 'none') fail(`${where}: odata.metadata=none has no control information`);
    switch (name) {
      case '@odata.etag':
        if (typeof v !== 'string' || !ENTITY_TAG.test(v)) fail(`${where}: ${JSON.stringify(v)} is not an entity tag`);
        break;
      case '@odata.id':
      case '@odata.editLink':
        if (cx.level !== 'full') fail(`${where}: only with odata.metadata=full`);
        if (!isAbsoluteUrl(v)) fail(`${where}: ${JSON.stringify(v)} is not an absolute URL`);
        break;
      case '@odata.type':
        if (cx.level !== 'full') fail(`${where}: only with odata.metadata=full`);
        if (v !== `#${cx.model.namespace}.${type.name}`) fail(`${where}: ${JSON.stringify(v)} is not ${type.name}`);
        break;
      default:
        fail(`${where}: unknown control information`);
    }
  }
  if (type.kind === 'EntityType' && cx.level === 'full') {
    for (const name of ['@odata.id', '@odata.type'])
      if (!(name in value)) fail(`${at}: odata.metadata=full, but ${name} is missing`);
  }
}

/** Is `name` shown by the `$select` of `shape` (none, or `*`: every structural property)? */
function selected(shape: Shape, type: StructuredType, name: string): boolean {
  if (!shape.select || type.key.includes(name)) return true;
  for (const item of shape.select) if (item === name || item.startsWith(`${name}/`)) return true;
  return false;
}

function expansionOf(shape: Shape, name: string): Shape | undefined {
  return shape.expand.get(name) ?? shape.expand.get('*');
}

/** An entity or complex value of `typeName`, shown as `shape` asks: every member checked against the metadata. */
function checkValue(typeName: string, value: unknown, shape: Shape, at: string, cx: Context): void {
  const { fail } = cx;
  const type = cx.model.types.get(typeName) ?? fail(`${at}: no type ${typeName} in the metadata`);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(`${at}: ${JSON.stringify(value)} is not an object of ${typeName}`);
  const object = value as Json;
  checkControl(type, object, at, cx);
  for (const [name, member] of Object.entries(object)) {
    if (name.startsWith('@')) continue;
    const where = `${at}.${name}`;
    const annotated = name.indexOf('@');
    if (annotated > 0) {
      checkMemberAnnotation(type, shape, name.slice(0, annotated), name.slice(annotated), member, where, cx);
      continue;
    }
    const def = type.members.get(name) ?? fail(`${where}: ${typeName} has no member ${name}`);
    if (def.kind === 'NavigationProperty') {
      const expanded = expansionOf(shape, name) ?? fail(`${where}: a navigation property that was not expanded`);
      checkNavigation(def, member, expanded, where, cx);
      continue;
    }
    if (!selected(shape, type, name)) fail(`${where}: not asked for by $select`);
    if (member === null) {
      if (!def.nullable || def.collection) fail(`${where}: null, but the metadata says not nullable`);
      continue;
    }
    const complex = unqualified(cx.model, def.type);
    const one = (item: unknown, itemAt: string) =>
      complex ? checkValue(complex, item, shapeWithin(shape, name), itemAt, cx) : checkScalar(def, item, itemAt, fail);
    if (def.collection) {
      if (!Array.isArray(member)) fail(`${where}: a collection must be an array`);
      (member as unknown[]).forEach((item, i) => one(item, `${where}[${i}]`));
    } else one(member, where);
  }
  const listForm = cx.list ? LIST_FORMS[typeName] : undefined;
  for (const [name, def] of type.members) {
    if (def.kind !== 'Property' || def.nullable || name in object) continue;
    if (listForm && !listForm.includes(name)) continue;
    if (selected(shape, type, name)) fail(`${at}: ${typeName}.${name} is not nullable, but it is missing`);
  }
}

function checkNavigation(def: Member, value: unknown, shape: Shape, at: string, cx: Context): void {
  const target = unqualified(cx.model, def.type) ?? cx.fail(`${at}: navigation to ${def.type}`);
  if (def.collection) {
    if (!Array.isArray(value)) cx.fail(`${at}: a collection-valued navigation property must be an array`);
    (value as unknown[]).forEach((item, i) => checkValue(target, item, shape, `${at}[${i}]`, cx));
  } else if (value === null) {
    if (!def.nullable) cx.fail(`${at}: null, but the navigation property is not nullable`);
  } else checkValue(target, value, shape, at, cx);
}

/** `Developments@odata.count` and the like: about an expanded collection, well formed. */
function checkMemberAnnotation(
  type: StructuredType,
  shape: Shape,
  name: string,
  annotation: string,
  value: unknown,
  at: string,
  cx: Context,
): void {
  const def = type.members.get(name);
  const expanded = expansionOf(shape, name);
  if (!def || def.kind !== 'NavigationProperty' || !def.collection || !expanded)
    cx.fail(`${at}: an annotation of what is not an expanded collection`);
  if (annotation === '@odata.count') {
    if (!expanded!.count) cx.fail(`${at}: a count that $expand did not ask for`);
    if (!Number.isInteger(value) || (value as number) < 0) cx.fail(`${at}: a count must be an integer`);
  } else if (annotation === '@odata.nextLink') {
    if (!isAbsoluteUrl(value)) cx.fail(`${at}: a next link must be an absolute URL`);
  } else cx.fail(`${at}: unknown annotation ${annotation}`);
}

function checkError(body: Json, fail: Fail): void {
  const error = body.error as Json | undefined;
  if (!error || typeof error !== 'object') fail('an error must be {"error": {...}}');
  if (Object.keys(body).length !== 1) fail('an error body has only "error"');
  if (typeof error!.code !== 'string' || typeof error!.message !== 'string')
    fail('an error needs a string code and message');
  if (error!.target !== undefined && typeof error!.target !== 'string') fail('an error target is a string');
  if (error!.details !== undefined) {
    if (!Array.isArray(error!.details)) fail('details must be an array');
    for (const detail of error!.details as Json[]) {
      if (typeof detail.code !== 'string' || typeof detail.message !== 'string')
        fail('each detail needs a string code and message');
    }
  }
}

/** `@odata.context`: `<service root>/$metadata#<Set>[(select)][/$entity]`, naming a set of the answer's type. */
function checkContext(value: unknown, target: { kind: 'collection' | 'entity'; type: string }, cx: Context): void {
  if (!isAbsoluteUrl(value)) cx.fail(`@odata.context ${JSON.stringify(value)} is not an absolute URL`);
  const fragment = /\/\$metadata#([A-Za-z_]\w*)(\([^)]*\))?(\/\$entity)?$/.exec(value as string);
  if (!fragment) cx.fail(`@odata.context ${JSON.stringify(value)} is not <service root>/$metadata#<Set>…`);
  if (cx.model.sets.get(fragment![1]!) !== target.type)
    cx.fail(`@odata.context names ${fragment![1]!}, not a set of ${target.type}`);
  if ((fragment![3] !== undefined) !== (target.kind === 'entity'))
    cx.fail(`@odata.context ${target.kind === 'entity' ? 'needs' : 'has no'} /$entity`);
}

/**
 * A complex collection property's value: `{"@odata.context": "…#Schemes('k')/Notes", "value": […]}`,
 * each item of the property's complex type, nothing else beside it.
 */
function checkProperty(context: unknown, body: Json, type: string, cx: Context): void {
  if (context !== undefined) {
    if (!isAbsoluteUrl(context)) cx.fail(`@odata.context ${JSON.stringify(context)} is not an absolute URL`);
    const fragment = /\/\$metadata#([A-Za-z_]\w*)\([^)]*\)\/([A-Za-z_]\w*)$/.exec(context as string);
    if (!fragment || !cx.model.sets.has(fragment[1]!))
      cx.fail(`@odata.context ${JSON.stringify(context)} is not <service root>/$metadata#<Set>(<key>)/<property>`);
  }
  const { value, ...others } = body;
  if (!Array.isArray(value)) cx.fail('a collection property answer has a value array');
  const beside = Object.keys(others)[0];
  if (beside !== undefined) cx.fail(`unknown member ${beside} beside value`);
  const shape: Shape = { expand: new Map(), count: false };
  (value as unknown[]).forEach((item, i) => checkValue(type, item, shape, `$.value[${i}]`, cx));
}

function levelOf(contentType: string | null, fail: Fail): Level {
  const level = /odata\.metadata=(\w+)/i.exec(contentType ?? '')?.[1]?.toLowerCase() ?? 'minimal';
  if (level !== 'minimal' && level !== 'none' && level !== 'full') fail(`odata.metadata=${level} is not a level`);
  return level as Level;
}

/**
 * Calls `violation` (which throws) when an answer under `/odata` is not what OData and the
 * `$metadata` say; `model`: the served one (stack.ts fetches it), else the generated one.
 */
export function checkODataAnswer(
  ex: Received,
  violation: (message: string) => never,
  model: ODataModel = GENERATED_MODEL,
): void {
  const fail = (message: string): never =>
    violation(`OData contract: ${ex.method} ${ex.path.split('?')[0]} answered ${ex.status}: ${message}`);
  if (ex.headers.get('odata-version') !== '4.0') fail('OData-Version: 4.0 is missing');
  const contentType = ex.headers.get('content-type');
  const type = contentType?.split(';')[0]!.trim().toLowerCase();
  const method = ex.method.toUpperCase();
  if (method === 'HEAD' || method === 'OPTIONS' || ex.status === 304 || ex.status === 204) return;
  // A write still running answers its `/Commands` state (DESIGN §6), not an OData resource.
  if (ex.status === 202) return;
  const parse = (): Json => {
    try {
      return JSON.parse(ex.text) as Json;
    } catch {
      return fail(`the body is not JSON: ${ex.text.slice(0, 200)}`);
    }
  };
  if (ex.status >= 400) {
    if (type !== 'application/json') fail(`an error must be application/json, not ${type}`);
    return checkError(parse(), fail);
  }
  if (/^\/odata\/\$batch(?:[?#]|$)/.test(ex.path)) return checkBatch(ex, type, parse, fail);
  const named = targetOf(ex.path, model) ?? fail('a success for a path the metadata does not name');
  // A write answers the one entity it wrote (a POST to a set too).
  const target =
    method !== 'GET' && named.kind === 'collection' ? { kind: 'entity' as const, type: named.type } : named;
  if (target.kind === 'metadata') return;
  if (target.kind === 'count') {
    if (!/^[0-9]+$/.test(ex.text)) fail(`a count must be digits, not ${ex.text.slice(0, 50)}`);
    return;
  }
  if (type !== 'application/json') fail(`a read must be application/json, not ${type}`);
  const body = parse();
  if (target.kind === 'service') {
    if (!Array.isArray(body.value)) fail('the service document has a value array');
    return;
  }
  const cx: Context = { model, level: levelOf(contentType, fail), list: target.kind === 'collection', fail };
  // A write answers the entity as a plain GET shows it (its URL's options do not apply, docs/odata.md).
  const shape: Shape = method === 'GET' ? shapeOfUrl(ex.path) : { expand: new Map(), count: false };
  const { '@odata.context': context, ...rest } = body;
  if (cx.level === 'none' ? context !== undefined : context === undefined)
    fail(`@odata.context ${cx.level === 'none' ? 'with' : 'without'} odata.metadata=${cx.level}`);
  if (target.kind === 'property') return checkProperty(context, rest, target.type, cx);
  if (context !== undefined) checkContext(context, target, cx);
  if (target.kind === 'entity') return checkValue(target.type, rest, shape, '$', cx);
  const { value, ...control } = rest;
  if (!Array.isArray(value)) fail('a collection answer has a value array');
  for (const [name, member] of Object.entries(control)) {
    if (name === '@odata.count') {
      if (!Number.isInteger(member) || (member as number) < 0) fail('@odata.count must be an integer');
    } else if (name === '@odata.nextLink') {
      if (!isAbsoluteUrl(member)) fail('@odata.nextLink must be an absolute URL');
    } else fail(`unknown member ${name} beside value`);
  }
  (value as unknown[]).forEach((item, i) => checkValue(target.type, item, shape, `$.value[${i}]`, cx));
}

/**
 * A `/odata/$batch` answer (DESIGN §17): the JSON format's `responses`, or multipart/mixed with an
 * `application/http` part per response; every error among them an OData error body.
 */
function checkBatch(ex: Received, type: string | undefined, parse: () => Json, fail: (m: string) => never): void {
  if (type === 'application/json') {
    const { responses } = parse();
    if (!Array.isArray(responses)) fail('a JSON batch answer has a responses array');
    for (const r of responses as Json[]) {
      if (typeof r.id !== 'string' || !Number.isInteger(r.status)) fail('each batch response has an id and a status');
      if ((r.status as number) >= 400) checkError(r.body as Json, fail);
    }
    return;
  }
  if (type !== 'multipart/mixed') fail(`a batch answer is application/json or multipart/mixed, not ${type}`);
  const boundary = /boundary=([^;\s]+)/.exec(ex.headers.get('content-type')!)?.[1];
  if (!boundary || !ex.text.trimEnd().endsWith(`--${boundary}--`)) fail('a multipart answer ends with its boundary');
  for (const part of ex.text.split(`--${boundary}`).slice(1, -1)) {
    const status = /HTTP\/1\.1 ([0-9]{3})/.exec(part)?.[1];
    if (!status && !/multipart\/mixed/.test(part)) fail('each part is an HTTP response or a changeset');
    if (status && Number(status) >= 400) {
      const body = part.slice(part.indexOf('\r\n\r\n', part.indexOf('HTTP/1.1')) + 4).trim();
      try {
        checkError(JSON.parse(body) as Json, fail);
      } catch (err) {
        if (err instanceof SyntaxError) fail(`an error part's body is not JSON: ${body.slice(0, 100)}`);
        throw err;
      }
    }
  }
}
