import { csdlJson } from '../../api/odata/metadata/csdl-json';

/** An answer as received (the contract check's Exchange). */
interface Received {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

/**
 * The OData side of the contract check (DESIGN §17): every answer under `/odata` that the suite
 * receives carries `OData-Version`; an error is the OData JSON error body; a JSON read answer is
 * checked against the generated `$metadata` (csdlJson): every member it shows is a member of the
 * type the URL names, of that member's Edm type, null only where the metadata says Nullable,
 * expanded navigation properties checked as their target type. Unknown members fail.
 */

type Json = Record<string, unknown>;

const NS = 'EntityManagement';
// The settings only change annotations, never a type.
const MODEL = csdlJson({ maxTop: 1000, maxExpandDepth: 3 });
const SCHEMA = MODEL[NS] as Record<string, Json>;
const CONTAINER = SCHEMA.Container as Record<string, Json>;

const DATE = /^-?\d{4,}-\d\d-\d\d$/;
const DATE_TIME = /^-?\d{4,}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;

function typeOfSet(set: string): string | undefined {
  const entry = CONTAINER[set] as { $Type?: string } | undefined;
  return entry?.$Type?.slice(NS.length + 1);
}

/** What a path under `/odata` answers: a collection or one entity of a type, a count, or something else. */
type Target =
  | { kind: 'collection'; type: string }
  | { kind: 'entity'; type: string }
  | { kind: 'count' }
  | { kind: 'service' }
  | { kind: 'metadata' };

const PREDICATE = /^([A-Za-z_]\w*)\((.*)\)$/s;

/** The resource path, read independently of the service's own matcher. */
export function targetOf(path: string): Target | undefined {
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
  const [set, key, nav, more] = segments;
  const type = typeOfSet(set!);
  if (!type) return undefined;
  if (key === undefined) return { kind: 'collection', type };
  if (key === '$count') return nav === undefined ? { kind: 'count' } : undefined;
  if (nav === undefined) return { kind: 'entity', type };
  if (more !== undefined) return more === '$count' ? { kind: 'count' } : undefined;
  const member = SCHEMA[type]![nav] as Json | undefined;
  if (!member || member.$Kind !== 'NavigationProperty') return undefined;
  const target = (member.$Type as string).slice(NS.length + 1);
  return member.$Collection ? { kind: 'collection', type: target } : { kind: 'entity', type: target };
}

function checkScalar(type: string, value: unknown, at: string, fail: (m: string) => never): void {
  switch (type) {
    case 'Edm.String':
      if (typeof value !== 'string') fail(`${at}: ${JSON.stringify(value)} is not an Edm.String`);
      return;
    case 'Edm.Int32':
      if (!Number.isInteger(value) || Math.abs(value as number) > 2 ** 31)
        fail(`${at}: ${JSON.stringify(value)} is not an Edm.Int32`);
      return;
    case 'Edm.Double':
    case 'Edm.Decimal':
      if (typeof value !== 'number' && !['NaN', 'INF', '-INF'].includes(value as string))
        fail(`${at}: ${JSON.stringify(value)} is not an ${type}`);
      return;
    case 'Edm.Boolean':
      if (typeof value !== 'boolean') fail(`${at}: ${JSON.stringify(value)} is not an Edm.Boolean`);
      return;
    case 'Edm.Date':
      if (typeof value !== 'string' || !DATE.test(value)) fail(`${at}: ${JSON.stringify(value)} is not an Edm.Date`);
      return;
    case 'Edm.DateTimeOffset':
      if (typeof value !== 'string' || !DATE_TIME.test(value))
        fail(`${at}: ${JSON.stringify(value)} is not an Edm.DateTimeOffset`);
      return;
    default:
      fail(`${at}: the metadata has a type ${type} this check does not know`);
  }
}

const CONTROL = new Set(['@odata.etag', '@odata.id', '@odata.editLink', '@odata.type', '@odata.context']);

/** An entity or complex value of `typeName`, every member it shows checked against the metadata. */
export function checkValue(typeName: string, value: unknown, at: string, fail: (m: string) => never): void {
  const type = SCHEMA[typeName];
  if (!type) fail(`${at}: no type ${typeName} in the metadata`);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail(`${at}: ${JSON.stringify(value)} is not an object of ${typeName}`);
  for (const [name, member] of Object.entries(value as Json)) {
    const where = `${at}.${name}`;
    if (name.startsWith('@')) {
      if (!CONTROL.has(name)) fail(`${where}: unknown control information`);
      if (typeof member !== 'string') fail(`${where}: control information must be a string`);
      continue;
    }
    // Annotations of a member (`Developments@odata.count`) are not members.
    if (name.includes('@')) continue;
    const def = type![name] as Json | undefined;
    if (!def || name.startsWith('$')) fail(`${where}: ${typeName} has no member ${name}`);
    const memberType = (def!.$Type as string | undefined) ?? 'Edm.String';
    if (member === null) {
      if (!def!.$Nullable || def!.$Collection) fail(`${where}: null, but the metadata says not nullable`);
      continue;
    }
    const one = (item: unknown, itemAt: string) =>
      memberType.startsWith(`${NS}.`)
        ? checkValue(memberType.slice(NS.length + 1), item, itemAt, fail)
        : checkScalar(memberType, item, itemAt, fail);
    if (def!.$Collection) {
      if (!Array.isArray(member)) fail(`${where}: a collection must be an array`);
      (member as unknown[]).forEach((item, i) => one(item, `${where}[${i}]`));
    } else one(member, where);
  }
}

function checkError(body: Json, fail: (m: string) => never): void {
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

/** Calls `violation` (which throws) when an answer under `/odata` is not what OData and our `$metadata` say. */
export function checkODataAnswer(ex: Received, violation: (message: string) => never): void {
  const fail = (message: string): never =>
    violation(`OData contract: ${ex.method} ${ex.path.split('?')[0]} answered ${ex.status}: ${message}`);
  if (ex.headers.get('odata-version') !== '4.0') fail('OData-Version: 4.0 is missing');
  const type = ex.headers.get('content-type')?.split(';')[0]!.trim().toLowerCase();
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
  const target = targetOf(ex.path) ?? fail('a success for a path the metadata does not name');
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
  if (target.kind === 'entity') return checkValue(target.type, body, '$', fail);
  // A POST to a collection answers the entity it created (DESIGN §17).
  if (method === 'POST') return checkValue(target.type, body, '$', fail);
  const { type: itemType } = target;
  const { value, ...control } = body;
  if (!Array.isArray(value)) fail('a collection answer has a value array');
  for (const [name, member] of Object.entries(control)) {
    if (name === '@odata.count') {
      if (!Number.isInteger(member)) fail('@odata.count must be an integer');
    } else if (name === '@odata.context' || name === '@odata.nextLink') {
      if (typeof member !== 'string') fail(`${name} must be a string`);
    } else fail(`unknown member ${name} beside value`);
  }
  (value as unknown[]).forEach((item, i) => checkValue(itemType, item, `$.value[${i}]`, fail));
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
