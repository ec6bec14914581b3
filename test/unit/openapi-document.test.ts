import test from 'ava';
import { readFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../../api/openapi/document';
import { ENTITIES, READ_MODELS } from '../../domain/entities';
import { checkContract, ContractViolation, type Exchange } from '../support/contract';
import { GENERATED_TYPES, generateClientTypes } from '../support/openapi-types';

/** ESM-only packages, loaded from this CommonJS build as Node loads them. */
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(specifier: string) => Promise<T>;

const document = buildOpenApiDocument({ maxTop: 1000, batchMaxRequests: 1000 });
const paths = document.paths as Record<string, Record<string, unknown>>;

test('the document is valid OpenAPI 3.1 under @seriousme/openapi-schema-validator', async (t) => {
  const { Validator } = await importEsm<typeof import('@seriousme/openapi-schema-validator')>(
    '@seriousme/openapi-schema-validator',
  );
  const validator = new Validator();
  const result = await validator.validate(document);
  t.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 1));
  t.true(result.valid);
  t.is(validator.version, '3.1');
});

test('every entity route and read model has its collection, $count and keyed operations, and an export', (t) => {
  for (const entity of [...ENTITIES, ...READ_MODELS]) {
    t.truthy(paths[`/${entity.route}`]?.get, entity.route);
    t.truthy(paths[`/${entity.route}`]?.post, entity.route);
    t.truthy(paths[`/${entity.route}/$count`]?.get, entity.route);
    for (const verb of ['get', 'put', 'patch', 'delete'])
      t.truthy(paths[`/${entity.route}/{key}`]?.[verb], entity.route);
    t.truthy(paths[`/Export/${entity.route}`]?.get, entity.route);
  }
});

test('the write bodies are the schemas the API validates with', (t) => {
  const schemas = (document.components as { schemas: Record<string, { properties: Record<string, unknown> }> }).schemas;
  const scheme = schemas.SchemeWrite!;
  t.deepEqual(scheme.properties.SchemeName, { type: 'string', minLength: 1, maxLength: 300 });
  t.deepEqual(scheme.properties.TotalUnits, { type: ['integer', 'null'], minimum: 0, maximum: 2147483647 });
});

const ok = (
  over: Partial<Omit<Exchange, 'headers'>> & { headers?: Record<string, string>; json?: unknown },
): Exchange => {
  const headers = new Headers(over.headers);
  if (over.json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return {
    method: over.method ?? 'GET',
    path: over.path ?? '/health/live',
    status: over.status ?? 200,
    headers,
    text: over.json === undefined ? (over.text ?? '') : JSON.stringify(over.json),
  };
};

test('the contract check accepts what the document says', (t) => {
  t.notThrows(() => checkContract(ok({ json: { status: 'ok' } })));
  t.notThrows(() =>
    checkContract(
      ok({
        method: 'POST',
        path: '/Countries',
        status: 201,
        headers: { location: '/Countries/abc', etag: '"1"' },
      }),
    ),
  );
  t.notThrows(() =>
    checkContract(
      ok({
        path: '/Nope',
        status: 404,
        headers: { 'content-type': 'application/problem+json' },
        json: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No resource at GET /Nope.' },
      }),
    ),
  );
});

test('the contract check rejects a wrong body, naming the operation, the status and the error', (t) => {
  const err = t.throws(() => checkContract(ok({ path: '/Countries/abc', headers: { etag: '"1"' }, json: { Id: 1 } })), {
    instanceOf: ContractViolation,
  });
  t.regex(err.message, /GET \/Countries\/\{key\} \(getCountry\) answered 200: body does not match/);
  t.regex(err.message, /\/Id must be string/);
});

test('the contract check rejects an undocumented status', (t) => {
  const err = t.throws(() => checkContract(ok({ status: 418, json: { status: 'ok' } })), {
    instanceOf: ContractViolation,
  });
  t.regex(err.message, /GET \/health\/live \(live\) answered 418: status 418 is not documented/);
});

test('the contract check rejects a wrong or missing header, and an undocumented media type', (t) => {
  const post = { method: 'POST', path: '/Countries', status: 201 };
  t.throws(() => checkContract(ok({ ...post, headers: { location: '/Countries/abc', etag: 'no quotes' } })), {
    message: /header ETag: "no quotes"/,
  });
  t.throws(() => checkContract(ok({ ...post, headers: { etag: '"1"' } })), {
    message: /required header Location is missing/,
  });
  t.throws(
    () => checkContract(ok({ path: '/Countries?$count=true', headers: { 'x-total-count': 'many' }, json: [] })),
    { message: /header X-Total-Count/ },
  );
  t.throws(() => checkContract(ok({ headers: { 'content-type': 'text/plain' }, text: 'ok' })), {
    message: /media type text\/plain is not documented/,
  });
  t.throws(
    () => checkContract(ok({ path: '/Nope', status: 404, headers: { 'content-type': 'text/html' }, text: 'x' })),
    {
      message: /must answer a problem/,
    },
  );
});

/** What OpenAPI 3.1 honours beside a Reference Object's `$ref`; anything else is ignored. */
const REFERENCE_OVERRIDES = new Set(['$ref', 'summary', 'description']);

/**
 * Every Reference Object outside the schemas that carries a member 3.1 ignores, by its place. Inside
 * a Schema Object (`schema`, `components.schemas`) `$ref` is JSON Schema's and its siblings count.
 */
function ignoredReferenceSiblings(node: unknown, at: string): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => ignoredReferenceSiblings(item, `${at}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  const entries = Object.entries(node as Record<string, unknown>);
  const own =
    '$ref' in node && entries.some(([key]) => !REFERENCE_OVERRIDES.has(key))
      ? [`${at}: ${entries.map(([key]) => key).join(', ')}`]
      : [];
  return [
    ...own,
    ...entries
      .filter(([key]) => key !== 'schema' && !(at === '/components' && key === 'schemas'))
      .flatMap(([key, value]) => ignoredReferenceSiblings(value, `${at}/${key}`)),
  ];
}

test('no header (nor any other Reference Object) carries a member OpenAPI 3.1 ignores beside its $ref', (t) => {
  t.deepEqual(ignoredReferenceSiblings(document, ''), []);
  // A required header is written out, so "Location is required" reaches 3.1 tools.
  const created = (paths['/Countries']!.post as { responses: Record<string, { headers: Record<string, unknown> }> })
    .responses['201']!.headers;
  t.like(created.Location, { required: true, schema: { type: 'string' } });
  t.false('$ref' in (created.Location as object));
  // The walk finds what it looks for.
  t.deepEqual(ignoredReferenceSiblings({ headers: { Location: { $ref: '#/x', required: true } } }, ''), [
    '/headers/Location: $ref, required',
  ]);
});

/** The components.schemas each schema refers to, directly. */
function schemaGraph(doc: Record<string, unknown>): Map<string, Set<string>> {
  const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
  const refs = (node: unknown, out: Set<string>): Set<string> => {
    if (Array.isArray(node)) node.forEach((item) => refs(item, out));
    else if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') out.add(value.replace('#/components/schemas/', ''));
        else refs(value, out);
      }
    }
    return out;
  };
  return new Map(Object.entries(schemas).map(([name, schema]) => [name, refs(schema, new Set())]));
}

/** A loop of schema references (`A → B → A`), or undefined when none reaches itself. */
function referenceCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const done = new Set<string>();
  const visit = (name: string, trail: string[]): string[] | undefined => {
    const seen = trail.indexOf(name);
    if (seen >= 0) return [...trail.slice(seen), name];
    if (done.has(name)) return undefined;
    for (const next of graph.get(name) ?? []) {
      const cycle = visit(next, [...trail, name]);
      if (cycle) return cycle;
    }
    done.add(name);
    return undefined;
  };
  for (const name of graph.keys()) {
    const cycle = visit(name, []);
    if (cycle) return cycle;
  }
  return undefined;
}

test('the flat form (?flat=true) is valid OpenAPI 3.1 whose schemas never refer back to themselves', async (t) => {
  // The nested form's entity schemas do loop: the reason the flat form exists.
  t.truthy(referenceCycle(schemaGraph(document)));
  const flat = buildOpenApiDocument({ maxTop: 1000, batchMaxRequests: 1000 }, 'flat');
  t.is(referenceCycle(schemaGraph(flat)), undefined);
  const { Validator } = await importEsm<typeof import('@seriousme/openapi-schema-validator')>(
    '@seriousme/openapi-schema-validator',
  );
  const result = await new Validator().validate(flat);
  t.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 1));
  // Every schema name a reference uses exists, and the entities keep their own fields.
  const schemas = (flat.components as { schemas: Record<string, { properties?: Record<string, unknown> }> }).schemas;
  for (const [name, targets] of schemaGraph(flat)) {
    for (const target of targets) t.truthy(schemas[target], `${name} → ${target}`);
  }
  const nested = (document.components as { schemas: typeof schemas }).schemas;
  t.deepEqual(schemas.Scheme!.properties!.SchemeName, nested.Scheme!.properties!.SchemeName);
  t.deepEqual(ignoredReferenceSiblings(flat, ''), []);
});

test('test/generated/openapi.d.ts is what openapi-typescript generates now (npm run openapi:types rewrites it)', async (t) => {
  const committed = readFileSync(GENERATED_TYPES, 'utf8');
  t.true(committed === (await generateClientTypes()), 'stale: run npm run openapi:types');
});
