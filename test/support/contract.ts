import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../api/openapi/document';
import { checkODataAnswer } from './odata-contract';
import { servedODataModel, type ODataModel } from './odata-model';

/**
 * The contract check (DESIGN §15): every response the integration suite receives is checked
 * against the operation of the OpenAPI document it answers: its status must be documented, its
 * media type too, its body must validate (ajv, JSON Schema 2020-12) and its documented headers must
 * be there when required and valid when present. A mismatch throws, naming the operation, the
 * status and ajv's error, so the test that received the response fails. The document is the one the
 * service serves (built by the same function); validators are compiled once per process.
 */

type Json = Record<string, unknown>;

export interface Exchange {
  method: string;
  /** The request target as sent: path and query. */
  path: string;
  status: number;
  headers: Headers;
  /** The body as received. */
  text: string;
  /** The request body as sent: a `$batch`'s requests say what each of its answers answers. */
  requestBody?: string;
  /** The `$metadata` the service serves, for an answer under `/odata` (else the generated one). */
  odataModel?: ODataModel;
}

const isODataPath = (path: string) => /^\/odata(?:[/?#]|$)/i.test(path);

/** The served `$metadata` an answer under `/odata` is checked against (none for other paths). */
export async function odataModelFor(baseUrl: string, path: string): Promise<ODataModel | undefined> {
  return isODataPath(path) ? servedODataModel(baseUrl) : undefined;
}

export class ContractViolation extends Error {}

const BASE = 'https://entity-management.local/schemas';
const SCHEMAS = '#/components/schemas/';

interface Route {
  method: string;
  template: string;
  segments: (string | null)[];
  operation: Json;
}

interface Checker {
  document: Json;
  routes: Route[];
  ajv: Ajv2020;
  compiled: Map<string, ValidateFunction>;
}

let checker: Checker | undefined;

function instance(): Checker {
  if (checker) return checker;
  // The settings only change request limits ($top's maximum), never a response's shape.
  const document = buildOpenApiDocument({ maxTop: 1000, batchMaxRequests: 1000 });
  const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
  addFormats(ajv, ['date', 'date-time', 'uri', 'uuid']);
  // Each component schema on its own: compiled once, however many responses refer to it.
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  for (const [schemaName, schema] of Object.entries(schemas)) {
    ajv.addSchema({ ...(rebased(schema) as Json), $id: `${BASE}/${schemaName}` });
  }
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue;
      const segments = template
        .split('/')
        .slice(1)
        .map((s) => (s.startsWith('{') ? null : s));
      routes.push({ method: method.toUpperCase(), template, segments, operation: operation as Json });
    }
  }
  // Literal segments win over templated ones (`/Schemes/$count` before `/Schemes/{key}`).
  routes.sort((a, b) => a.segments.filter((s) => s === null).length - b.segments.filter((s) => s === null).length);
  checker = { document, routes, ajv, compiled: new Map() };
  return checker;
}

/** What a Reference Object may say beside its `$ref` (OpenAPI 3.1); any other sibling is ignored. */
const REFERENCE_OVERRIDES = new Set(['summary', 'description']);

/**
 * A `#/components/...` object, followed through its `$ref`s as OpenAPI 3.1 tools follow a
 * Reference Object: a `required` beside the `$ref` counts for nothing.
 */
function deref(c: Checker, value: unknown): Json {
  let v = value as Json;
  while (v && typeof v.$ref === 'string' && (v.$ref as string).startsWith('#/')) {
    let target: unknown = c.document;
    for (const part of (v.$ref as string).slice(2).split('/'))
      target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    v = { ...(target as Json), ...Object.fromEntries(Object.entries(v).filter(([k]) => REFERENCE_OVERRIDES.has(k))) };
  }
  return v;
}

/** A schema of the document, its references pointed at the registered components. */
function rebased(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebased);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMAS)
        ? `${BASE}/${v.slice(SCHEMAS.length)}`
        : rebased(v);
  }
  return out;
}

function validator(c: Checker, key: string, schema: unknown): ValidateFunction {
  let validate = c.compiled.get(key);
  if (!validate) {
    validate = c.ajv.compile(rebased(schema) as Json);
    c.compiled.set(key, validate);
  }
  return validate;
}

function segmentsOf(path: string): string[] {
  // The path the service sees: as fetch sends it (`.` and `..` segments resolved).
  let p = new URL(`http://service${path}`).pathname;
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p
    .split('/')
    .slice(1)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

function routeOf(c: Checker, method: string, path: string): Route | undefined {
  const segments = segmentsOf(path);
  const wanted = method === 'HEAD' ? 'GET' : method;
  return c.routes.find(
    (r) =>
      r.method === wanted &&
      r.segments.length === segments.length &&
      r.segments.every((s, i) => s === null || s === segments[i]),
  );
}

function essence(contentType: string | null): string | undefined {
  return contentType?.split(';')[0]!.trim().toLowerCase() || undefined;
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

function errorsText(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');
}

function checkBody(c: Checker, key: string, schema: unknown, ex: Exchange, fail: (m: string) => never): void {
  let body: unknown;
  try {
    body = JSON.parse(ex.text);
  } catch {
    fail(`body is not JSON: ${ex.text.slice(0, 200)}`);
  }
  const validate = validator(c, key, schema);
  if (!validate(body)) fail(`body does not match the schema: ${errorsText(validate)}`);
}

function headerValue(schema: Json, raw: string): unknown {
  return schema.type === 'integer' && /^-?[0-9]+$/.test(raw) ? Number(raw) : raw;
}

/** Throws a ContractViolation when the response is not what the document says. */
export function checkContract(ex: Exchange): void {
  // The OData service root is described by its `$metadata`, not by the OpenAPI document.
  if (isODataPath(ex.path)) {
    return checkODataAnswer(
      ex,
      (message) => {
        throw new ContractViolation(message);
      },
      ex.odataModel,
    );
  }
  const c = instance();
  const method = ex.method.toUpperCase();
  const route = routeOf(c, method, ex.path);
  const name = route
    ? `${method} ${route.template} (${route.operation.operationId as string})`
    : `${method} ${ex.path.split('?')[0]}`;
  const fail = (message: string): never => {
    throw new ContractViolation(`OpenAPI contract: ${name} answered ${ex.status}: ${message}`);
  };
  const type = essence(ex.headers.get('content-type'));
  if (method === 'OPTIONS' && ex.status < 400) {
    // The document's description: OPTIONS answers the CORS preflight (204, with CORS_ORIGINS), or
    // the methods of the path (200, `Allow` and the same list as text); otherwise a problem.
    if (ex.status === 204 && ex.text === '') return;
    const allow = ex.headers.get('allow');
    if (ex.status === 200 && allow && type === 'text/plain' && ex.text === allow) return;
    fail(`OPTIONS answers 204 (CORS preflight) or 200 with Allow, not this (${type}: ${ex.text.slice(0, 100)})`);
  }
  // Bull Board's own assets and API under its page (the document says they are not described).
  if (!route && ex.path.startsWith('/admin/queues/')) return;
  // Undocumented paths and methods answer a problem (the document's description says so).
  if (!route) return checkProblem(ex);
  const responses = route.operation.responses as Json;
  const documented = responses[String(ex.status)] ?? responses[`${String(ex.status)[0]}XX`] ?? responses.default;
  if (!documented) fail(`status ${ex.status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
  const response = deref(c, documented);
  for (const [header, raw] of Object.entries((response.headers ?? {}) as Json)) {
    const spec = deref(c, raw);
    const value = ex.headers.get(header);
    if (value === null) {
      if (spec.required) fail(`required header ${header} is missing`);
      continue;
    }
    const key = `${route.template} ${method} ${ex.status} header ${header}`;
    const validate = validator(c, key, spec.schema ?? {});
    if (!validate(headerValue(spec.schema as Json, value))) {
      fail(`header ${header}: ${JSON.stringify(value)} ${errorsText(validate)}`);
    }
  }
  const content = response.content as Record<string, Json> | undefined;
  if (!content) {
    if (ex.text !== '') fail(`no body is documented, but one came (${type}): ${ex.text.slice(0, 200)}`);
    return;
  }
  // `content` says what a body is when there is one (a write answers one only when asked to).
  if (ex.text === '' && !type) return;
  if (!type) fail('a body came without a Content-Type');
  const media = content[type!];
  if (!media) fail(`media type ${type} is not documented (documented: ${Object.keys(content).join(', ')})`);
  if (method === 'HEAD' || !isJsonType(type!)) return;
  checkBody(c, `${route.template} ${method} ${ex.status} ${type}`, media!.schema ?? {}, ex, fail);
  if (route.template === '/$batch' && ex.status === 200) checkBatchAnswers(ex, fail);
}

/** A problem body, whatever the operation (an undocumented one, or a 424 inside a batch). */
function checkProblem(ex: Exchange): void {
  const fail = (message: string): never => {
    throw new ContractViolation(
      `OpenAPI contract: ${ex.method} ${ex.path.split('?')[0]} answered ${ex.status}: ${message}`,
    );
  };
  const type = essence(ex.headers.get('content-type'));
  if (type !== 'application/problem+json') fail(`an undocumented operation must answer a problem, not ${type}`);
  if (ex.method.toUpperCase() === 'HEAD') return;
  checkBody(instance(), 'problem', { $ref: '#/components/schemas/Problem' }, ex, fail);
}

interface BatchAnswer {
  id: string;
  status: number;
  headers: Record<string, string>;
  body?: unknown;
}

/**
 * Each answer of a `$batch` is what its request alone answers (DESIGN §12), so it is checked as
 * that operation's response; besides, any request of a batch may answer 424 (a failed dependency).
 */
function checkBatchAnswers(ex: Exchange, fail: (m: string) => never): void {
  let requests: { id?: unknown; method?: unknown; url?: unknown }[];
  try {
    requests = (JSON.parse(ex.requestBody ?? '') as { requests: typeof requests }).requests;
  } catch {
    return;
  }
  if (!Array.isArray(requests)) return;
  const sent = new Map(requests.map((r) => [r.id, r]));
  const created = new Map<string, string>();
  for (const answer of (JSON.parse(ex.text) as { responses: BatchAnswer[] }).responses) {
    const request = sent.get(answer.id);
    if (!request || typeof request.method !== 'string' || typeof request.url !== 'string') continue;
    if (answer.headers.location) created.set(answer.id, answer.headers.location);
    let url = request.url;
    if (url.startsWith('$')) {
      const [reference, query] = url.slice(1).split('?');
      const location = created.get(reference!);
      if (!location) continue;
      url = query === undefined ? location : `${location}?${query}`;
    }
    const type = answer.headers['content-type'] ?? '';
    const text =
      answer.body === undefined
        ? ''
        : isJsonType(essence(type) ?? '')
          ? JSON.stringify(answer.body)
          : String(answer.body);
    const exchange = {
      method: request.method,
      path: url.startsWith('/') ? url : `/${url}`,
      status: answer.status,
      headers: new Headers(answer.headers),
      text,
    };
    // Only the entity routes are served inside a batch; any other request is its own 404 or 405.
    const served = routeOf(instance(), exchange.method.toUpperCase(), exchange.path)?.operation['x-batch'] === true;
    try {
      if (answer.status === 424 || !served) checkProblem(exchange);
      else checkContract(exchange);
    } catch (err) {
      if (err instanceof ContractViolation) fail(`request '${answer.id}' of the batch: ${err.message}`);
      throw err;
    }
  }
}

/**
 * `fetch` against the service, with the response checked against the contract (for the tests that
 * call the service with fetch directly: streams, spawned processes, the generated client).
 */
export async function checkedFetch(
  url: string | URL | Request,
  init?: RequestInit,
  /** The fetch that sends it (a client that calls the global fetch has it replaced by a checking one). */
  send: typeof fetch = fetch,
): Promise<Response> {
  const request = new Request(url, init);
  const requestBody = request.body ? await request.clone().text() : undefined;
  const res = await send(request);
  // An event stream (GET /Changes) never ends: its status, headers and media type are checked, not its body.
  const streaming = res.ok && essence(res.headers.get('content-type')) === 'text/event-stream';
  const text = streaming ? '' : await res.clone().text();
  const target = new URL(request.url);
  const path = `${target.pathname}${target.search}`;
  const odataModel = await odataModelFor(target.origin, path);
  checkContract({
    method: request.method,
    path,
    status: res.status,
    headers: res.headers,
    text,
    requestBody,
    odataModel,
  });
  return res;
}
