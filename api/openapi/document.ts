import { ENTITIES, READ_MODELS, type EntityDefinition } from '../../domain/entities';
import { POLICY, type Policy } from '../../domain/auth/roles';
import { READ_QUERY_OPTIONS } from '../../domain/queries/read-options';
import { ALL_QUEUES } from '../../domain/queues/queue-contracts';
import { EXPORT_OPTIONS } from '../export/export.routes';
import { MEDIA_TYPE } from '../export/export-format';
import { JOB_LISTING_PARAMS } from '../jobs/jobs.routes';
import { JOB_STATES } from '../jobs/job-listing';
import { JSON_TYPE, PROBLEM_TYPE } from '../http/answer';
import { componentSchemas, ref, writeSchemaName, type Schema, type SchemaForm } from './schemas';
import { DOCS_ASSETS, DOCS_INIT_FILE } from './docs-page';
import { EVENT_STREAM } from '../changes/changes.routes';
import { ODATA_ROOT, ROOT, ROUTES } from '../routes/route-table';
import { labelOf, type Route } from '../routes/route';

/**
 * The OpenAPI 3.1 document of the service (DESIGN §15), generated from the entity definitions and
 * the write schemas the API validates with; built once per process and settings (openapi.routes.ts).
 * Its paths are the route table's (api/routes/route-table.ts): the operations below are described
 * per table label, and building fails for a table route without them or a description without a
 * route. The integration suite checks every response it receives against them (test/support/contract.ts).
 */

export interface DocumentSettings {
  /** MAX_TOP: the largest `$top`. */
  maxTop: number;
  /** BATCH_MAX_REQUESTS. */
  batchMaxRequests: number;
}

type Operation = Record<string, unknown>;
type Responses = Record<string, unknown>;

const PATCH_TYPE = 'application/json-patch+json';

const json = (schema: Schema) => ({ [JSON_TYPE]: { schema } });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
/** Component keys cannot hold `$`: `$filter` is `filter` there. */
const paramRef = (name: string): Schema => ({ $ref: `#/components/parameters/${name.replace(/^\$/, '')}` });
const problemRef = (status: number) => ({ $ref: `#/components/responses/Problem${status}` });

/** `security` of an operation: the bearer token of a caller holding one of the roles (OpenAPI 3.1 role lists). */
function securityOf(policy: Policy | 'any' | 'none'): unknown[] {
  if (policy === 'none') return [];
  if (policy === 'any') return [{ bearerAuth: [] }];
  return policy.map((role) => ({ bearerAuth: [role] }));
}

function rolesText(policy: Policy | 'any' | 'none'): string {
  if (policy === 'none') return 'No token.';
  if (policy === 'any') return 'Any authenticated caller, with or without a role.';
  return `Roles: ${policy.join(' or ')}.`;
}

/** Answers every authenticated operation may give besides its own (auth, rate limit, outages). */
const AUTHENTICATED_PROBLEMS = [401, 403, 429, 500, 503];

function operation(
  policy: Policy | 'any' | 'none',
  op: { id: string; tag: string; summary: string; description?: string; responses: Responses } & Operation,
  problems: number[],
): Operation {
  const { id, tag, summary, description, responses, ...rest } = op;
  const all: Responses = { ...responses };
  const statuses = policy === 'none' ? problems : [...problems, ...AUTHENTICATED_PROBLEMS];
  for (const status of [...new Set(statuses)].sort()) all[String(status)] ??= problemRef(status);
  return {
    operationId: id,
    tags: [tag],
    summary,
    description: [description, rolesText(policy)].filter(Boolean).join('\n\n'),
    security: securityOf(policy),
    ...rest,
    responses: all,
  };
}

function queryParam(name: string, schema: Schema, description: string): Schema {
  return { name, in: 'query', required: false, schema, description };
}

function readParameters(settings: DocumentSettings): Record<string, Schema> {
  const described: Record<(typeof READ_QUERY_OPTIONS)[number], Schema> = {
    $filter: queryParam(
      '$filter',
      { type: 'string' },
      "OData filter expression (spec §4.1), e.g. `SchemeName eq 'Mill'`.",
    ),
    $orderby: queryParam(
      '$orderby',
      { type: 'string' },
      'Comma-separated properties, each optionally `asc` or `desc`.',
    ),
    $expand: queryParam(
      '$expand',
      { type: 'string' },
      'Relations and collections to show in full, with nested options: `Address,Companies($expand=Company)`.',
    ),
    $top: queryParam('$top', { type: 'integer', minimum: 0, maximum: settings.maxTop }, `Page size (MAX_TOP).`),
    $skip: queryParam('$skip', { type: 'integer', minimum: 0 }, 'Rows to skip; beyond MAX_SKIP page by `Id gt`.'),
    $count: queryParam(
      '$count',
      { type: 'string', enum: ['true', 'false'] },
      '`true` adds `X-Total-Count` with the number of matching rows: exact for a whole set; with `$filter`, counted up to COUNT_LIMIT, with `$search` up to SEARCH_COUNT_LIMIT (`X-Total-Count-Limit-Exceeded: true` when it stopped there).',
    ),
    $select: queryParam('$select', { type: 'string' }, 'Accepted and ignored: every member is always shown.'),
    $search: queryParam('$search', { type: 'string' }, 'Full-text search over the searchable fields (DESIGN §5).'),
    $format: queryParam('$format', { type: 'string', enum: ['json', JSON_TYPE] }, 'Only JSON is offered.'),
  };
  const out: Record<string, Schema> = {};
  for (const [name, param] of Object.entries(described)) out[name.replace(/^\$/, '')] = param;
  return {
    ...out,
    key: {
      name: 'key',
      in: 'path',
      required: true,
      schema: { type: 'string' },
      description: 'The encoded Id (bare integer keys are also accepted on the five routes of spec 2.3).',
    },
    'If-Match': {
      name: 'If-Match',
      in: 'header',
      required: false,
      schema: { type: 'string' },
      description: 'Entity tag(s) of the version to change; another version answers 412.',
    },
    'If-None-Match': {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      schema: { type: 'string' },
      description: 'Entity tag(s) the client holds; the current one answers 304.',
    },
    'X-Consistency-Token': {
      name: 'X-Consistency-Token',
      in: 'header',
      required: false,
      schema: { type: 'string' },
      description:
        'The token of a write answer, sent back as it came: the read sees that write (a replica that has replayed it, or the primary). Any other value is a 400.',
    },
    Prefer: {
      name: 'Prefer',
      in: 'header',
      required: false,
      schema: { type: 'string', enum: ['return=representation', 'return=minimal'] },
      description: '`return=representation` answers the written entity (200/201 with a body, `Preference-Applied`).',
    },
    'Idempotency-Key': {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
      description: 'A repeat with the same key and body answers the first answer and applies nothing again.',
    },
  };
}

const HEADERS: Record<string, Schema> = {
  Location: { description: 'Where the created entity, or the outcome, is.', schema: { type: 'string' } },
  ETag: {
    description: 'Entity tag of the version shown or written (what `If-Match` compares).',
    schema: { type: 'string', pattern: '^"[^"]+"$' },
  },
  'Preference-Applied': { schema: { const: 'return=representation' } },
  'X-Total-Count': { description: 'Rows matching, with `$count=true`.', schema: { type: 'integer', minimum: 0 } },
  'X-Total-Count-Limit-Exceeded': {
    description:
      'The count stopped at COUNT_LIMIT (SEARCH_COUNT_LIMIT with `$search`): more rows match than the number given.',
    schema: { const: 'true' },
  },
  'X-Consistency-Token': {
    description: 'Token of the write, to read one’s own writes on replicas (issue 15).',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
  Link: {
    description: 'The next page (RFC 8288), when there is one: `</Schemes?$top=60&$filter=…>; rel="next"`.',
    schema: { type: 'string', pattern: '^</[^>]*>; rel="next"$' },
  },
  Allow: { description: 'The methods the resource takes.', schema: { type: 'string' } },
  'WWW-Authenticate': { description: 'Bearer challenge (RFC 6750).', schema: { type: 'string', pattern: '^Bearer' } },
  'Content-Disposition': { schema: { type: 'string', pattern: '^attachment' } },
};

/**
 * A header the answer always carries, written out in full: in OpenAPI 3.1 a `$ref` in a Header
 * Object's place is a Reference Object, whose siblings other than `summary` and `description` are
 * ignored, so `{ $ref, required: true }` would lose the `required`.
 */
const requiredHeader = (name: string) => ({ ...HEADERS[name], required: true });

function problemResponses(): Record<string, unknown> {
  const descriptions: Record<number, string> = {
    304: 'Not modified',
    400: 'Bad request or validation failed (`extensions.errors` lists every problem)',
    401: 'No valid bearer token',
    403: 'The caller holds none of the roles the operation needs',
    404: 'Not found',
    405: 'Method not allowed',
    406: 'Not acceptable',
    409: 'Conflict (`extensions.errors`)',
    412: 'Precondition failed: `If-Match` names another version',
    413: 'Request or response too large',
    415: 'Unsupported media type',
    424: 'Failed dependency',
    429: 'Too many requests',
    500: 'Internal error (no internals shown)',
    503: 'A store, queue or worker is unavailable; try again',
  };
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(descriptions)) {
    if (status === '304') continue;
    const headers: Record<string, unknown> = {};
    if (status === '401') headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
    if (status === '405') headers.Allow = headerRef('Allow');
    if (status === '429' || status === '503') headers['Retry-After'] = headerRef('Retry-After');
    if (status === '503') headers.Location = headerRef('Location');
    out[`Problem${status}`] = {
      description,
      ...(Object.keys(headers).length ? { headers } : {}),
      content: { [PROBLEM_TYPE]: { schema: ref('Problem') } },
    };
  }
  return out;
}

const COMMAND_ACCEPTED = {
  description: 'Still running after COMMAND_TIMEOUT_MS: its outcome will be at `Location` (`GET /Commands/{id}`).',
  headers: { Location: requiredHeader('Location') },
  content: json(ref('CommandState')),
};

/** `/Subscriptions` (AdminOnly, DESIGN §16). */
function subscriptionPaths(settings: DocumentSettings): Record<string, unknown> {
  const tag = 'Subscriptions';
  const page = [
    queryParam('$top', { type: 'integer', minimum: 0, maximum: settings.maxTop }, 'Page size (default 50, MAX_TOP).'),
    queryParam('$skip', { type: 'integer', minimum: 0 }, 'Entries to skip.'),
  ];
  const etag = { ETag: requiredHeader('ETag') };
  const shown = (description: string) => ({ description, headers: etag, content: json(ref('Subscription')) });
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string' },
    description: 'The subscription Id.',
  };
  return {
    '/Subscriptions': {
      get: operation(
        POLICY.adminOnly,
        {
          id: 'listSubscriptions',
          tag,
          summary: 'Webhook subscriptions',
          parameters: [...page, paramRef('$count')],
          responses: {
            200: {
              description: 'Subscriptions in key order (never their secrets).',
              headers: { 'X-Total-Count': headerRef('X-Total-Count') },
              content: json({ type: 'array', items: ref('Subscription') }),
            },
          },
        },
        [400],
      ),
      post: operation(
        POLICY.adminOnly,
        {
          id: 'createSubscription',
          tag,
          summary: 'Subscribe a URL to events',
          description:
            'Each matching event is POSTed as `{ type, timestamp, data }` with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried on WEBHOOK_RETRY_SCHEDULE. The answer carries the signing `Secret`, this once.',
          requestBody: { required: true, content: json(ref('SubscriptionWrite')) },
          responses: {
            201: {
              description: 'Created; the body carries the secret, shown only here.',
              headers: { Location: requiredHeader('Location'), ...etag },
              content: json(ref('SubscriptionCreated')),
            },
            202: COMMAND_ACCEPTED,
          },
        },
        [400, 409, 413, 415],
      ),
    },
    '/Subscriptions/{id}': {
      parameters: [id],
      get: operation(
        POLICY.adminOnly,
        { id: 'getSubscription', tag, summary: 'One subscription', responses: { 200: shown('The subscription.') } },
        [404],
      ),
      patch: operation(
        POLICY.adminOnly,
        {
          id: 'patchSubscription',
          tag,
          summary: 'Change Url, Events or Active with JSON Patch',
          description: `An RFC 6902 document (\`${PATCH_TYPE}\`) over the subscription as GET shows it; only \`/Url\`, \`/Events\` (or its items) and \`/Active\` may change (\`test\` may look anywhere). \`Active: false\` stops deliveries, pending ones included.`,
          parameters: [paramRef('If-Match')],
          requestBody: {
            required: true,
            content: {
              [PATCH_TYPE]: {
                schema: ref('JsonPatch'),
                examples: { off: { value: [{ op: 'replace', path: '/Active', value: false }] } },
              },
            },
          },
          responses: { 200: shown('The subscription as changed.'), 202: COMMAND_ACCEPTED },
        },
        [400, 404, 409, 412, 413, 415],
      ),
      delete: operation(
        POLICY.adminOnly,
        {
          id: 'deleteSubscription',
          tag,
          summary: 'Delete a subscription (its pending deliveries are dropped)',
          parameters: [paramRef('If-Match')],
          responses: { 202: COMMAND_ACCEPTED, 204: { description: 'Deleted.' } },
        },
        [404, 412],
      ),
    },
    '/Subscriptions/{id}/Deliveries': {
      parameters: [id],
      get: operation(
        POLICY.adminOnly,
        {
          id: 'listSubscriptionDeliveries',
          tag,
          summary: 'Recent delivery attempts, newest first',
          parameters: page,
          responses: {
            200: {
              description: 'Attempts (kept WEBHOOK_DELIVERY_RETENTION_HOURS).',
              content: json({ type: 'array', items: ref('Delivery') }),
            },
          },
        },
        [400, 404],
      ),
    },
  };
}

function entityPaths(entity: EntityDefinition, settings: DocumentSettings): Record<string, unknown> {
  const { name, route } = entity;
  const readOnly = READ_MODELS.includes(entity);
  const tag = route;
  const readParams = [...READ_QUERY_OPTIONS].map((o) => paramRef(o));
  const consistency = paramRef('X-Consistency-Token');
  if (Object.keys(entity.searchFields).length) {
    readParams.push({
      name: 'searchFields',
      in: 'query',
      required: false,
      schema: { type: 'string' },
      description: `Comma-separated fields \`$search\` looks in: ${Object.keys(entity.searchFields).join(', ')}.`,
    });
  }
  const list = operation(
    POLICY.default,
    {
      id: `list${route}`,
      tag,
      summary: `List ${route}`,
      description: `Pages of ${name} in \`$orderby\` order (Id by default), at most ${settings.maxTop} a page.`,
      parameters: [...readParams, consistency],
      responses: {
        200: {
          description: `A page of ${route}.`,
          headers: {
            'X-Total-Count': headerRef('X-Total-Count'),
            'X-Total-Count-Limit-Exceeded': headerRef('X-Total-Count-Limit-Exceeded'),
            Link: headerRef('Link'),
          },
          content: json({ type: 'array', items: ref(name) }),
        },
      },
    },
    [400, 404, 413],
  );
  const countParams = ['$filter', '$search', '$format'].map(paramRef);
  if (Object.keys(entity.searchFields).length) countParams.push(readParams[readParams.length - 1]!);
  countParams.push(consistency);
  const count = operation(
    POLICY.default,
    {
      id: `count${route}`,
      tag,
      summary: `Count ${route}`,
      parameters: countParams,
      responses: {
        200: {
          description:
            'The number of matching rows (a whole set exactly; otherwise up to COUNT_LIMIT, or SEARCH_COUNT_LIMIT with `$search`).',
          headers: { 'X-Total-Count-Limit-Exceeded': headerRef('X-Total-Count-Limit-Exceeded') },
          content: { 'text/plain': { schema: { type: 'string', pattern: '^[0-9]+$' } } },
        },
      },
    },
    [400, 404],
  );
  const keyedGet = operation(
    POLICY.default,
    {
      id: `get${name}`,
      tag,
      summary: `Read one ${name}`,
      parameters: [
        paramRef('key'),
        paramRef('$expand'),
        paramRef('$select'),
        paramRef('$format'),
        paramRef('If-None-Match'),
        consistency,
      ],
      responses: {
        200: {
          description: `The ${name}.`,
          headers: { ETag: requiredHeader('ETag') },
          content: json(ref(name)),
        },
        304: { description: 'The entity tag in `If-None-Match` is current.', headers: { ETag: headerRef('ETag') } },
      },
    },
    [400, 404, 413],
  );
  if (readOnly) {
    const refused = (verb: string) =>
      operation(
        POLICY.default,
        { id: `${verb}${name}`, tag, summary: `${route} is read-only (405)`, responses: {} },
        [405, 404],
      );
    return {
      [`/${route}`]: { get: list, post: refused('create') },
      [`/${route}/$count`]: { get: count },
      [`/${route}/{key}`]: {
        parameters: [paramRef('key')],
        get: { ...keyedGet, parameters: (keyedGet.parameters as unknown[]).slice(1) },
        put: refused('replace'),
        patch: refused('patch'),
        delete: refused('delete'),
      },
    };
  }
  const written = (status: number, created: boolean) => ({
    description: created ? `Created; the entity itself with \`Prefer: return=representation\`.` : 'The entity written.',
    headers: {
      ...(created ? { Location: requiredHeader('Location') } : {}),
      ETag: requiredHeader('ETag'),
      'Preference-Applied': headerRef('Preference-Applied'),
      'X-Consistency-Token': headerRef('X-Consistency-Token'),
    },
    ...(status === 204 ? {} : { content: json(ref(name)) }),
  });
  const writeProblems = [400, 404, 409, 412, 413, 415];
  const writeBody = {
    required: true,
    content: json({ $ref: `#/components/schemas/${writeSchemaName(entity)}` }),
  };
  const create = operation(
    POLICY.default,
    {
      id: `create${name}`,
      tag,
      summary: `Create a ${name}`,
      parameters: [paramRef('Prefer'), paramRef('Idempotency-Key')],
      requestBody: writeBody,
      responses: {
        201: written(201, true),
        202: COMMAND_ACCEPTED,
      },
    },
    writeProblems,
  );
  const replace = operation(
    POLICY.default,
    {
      id: `replace${name}`,
      tag,
      summary: `Replace a ${name}`,
      parameters: [paramRef('If-Match'), paramRef('Prefer')],
      requestBody: writeBody,
      responses: {
        200: written(200, false),
        202: COMMAND_ACCEPTED,
        204: { ...written(204, false), description: 'Replaced.' },
      },
    },
    writeProblems,
  );
  const patch = operation(
    POLICY.default,
    {
      id: `patch${name}`,
      tag,
      summary: `Change a ${name} with JSON Patch`,
      description: `An RFC 6902 document (\`${PATCH_TYPE}\`, the only type taken) over the entity as a keyed GET shows it; the result must be a valid ${writeSchemaName(entity)}.`,
      parameters: [paramRef('If-Match'), paramRef('Prefer')],
      requestBody: {
        required: true,
        content: {
          [PATCH_TYPE]: {
            schema: ref('JsonPatch'),
            examples: {
              replace: { value: [{ op: 'replace', path: `/${Object.keys(entity.fields)[0]}`, value: null }] },
            },
          },
        },
      },
      responses: {
        200: written(200, false),
        202: COMMAND_ACCEPTED,
        204: { ...written(204, false), description: 'Changed.' },
      },
    },
    writeProblems,
  );
  const remove = operation(
    POLICY.default,
    {
      id: `delete${name}`,
      tag,
      summary: `Delete a ${name}`,
      parameters: [paramRef('If-Match')],
      responses: {
        202: COMMAND_ACCEPTED,
        204: { description: 'Deleted.', headers: { 'X-Consistency-Token': headerRef('X-Consistency-Token') } },
      },
    },
    [400, 404, 409, 412],
  );
  return {
    [`/${route}`]: { get: list, post: create },
    [`/${route}/$count`]: { get: count },
    [`/${route}/{key}`]: {
      parameters: [paramRef('key')],
      get: { ...keyedGet, parameters: (keyedGet.parameters as unknown[]).slice(1) },
      put: replace,
      patch,
      delete: remove,
    },
  };
}

function exportPath(entity: EntityDefinition): Record<string, unknown> {
  const params = [...EXPORT_OPTIONS].filter((o) => o.startsWith('$')).map(paramRef);
  if (Object.keys(entity.searchFields).length) {
    params.push(queryParam('searchFields', { type: 'string' }, 'Fields `$search` looks in.'));
  }
  params.push(paramRef('X-Consistency-Token'));
  return {
    [`/Export/${entity.route}`]: {
      get: operation(
        POLICY.default,
        {
          id: `export${entity.route}`,
          tag: 'Export',
          summary: `Export every matching ${entity.name}`,
          description:
            'Streams every row matching `$filter` and `$search`, in `$orderby` order, as CSV (the default) or NDJSON as `Accept` asks. No paging.',
          parameters: params,
          responses: {
            200: {
              description: 'The rows (CSV with a header row, or one JSON document a line).',
              headers: { 'Content-Disposition': headerRef('Content-Disposition') },
              content: {
                [MEDIA_TYPE.csv.split(';')[0]!]: { schema: { type: 'string' } },
                [MEDIA_TYPE.ndjson]: { schema: { type: 'string' } },
              },
            },
          },
        },
        [400, 404, 406],
      ),
    },
  };
}

function servicePaths(settings: DocumentSettings): Record<string, unknown> {
  const text = (description: string, type = 'text/plain') => ({
    description,
    content: { [type]: { schema: { type: 'string' } } },
  });
  const open = (id: string, tag: string, summary: string, responses: Responses, problems: number[] = []) => ({
    get: operation('none', { id, tag, summary, responses }, problems),
  });
  const queueParams = [
    { name: 'queue', in: 'path', required: true, schema: { enum: [...ALL_QUEUES] } },
    { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
  ];
  const jobAccepted = {
    description: 'Queued.',
    headers: { Location: requiredHeader('Location') },
    content: json(ref('JobEntry')),
  };
  return {
    '/$batch': {
      post: operation(
        POLICY.default,
        {
          id: 'batch',
          tag: 'Batch',
          summary: 'Several requests in one (OData 4.01 JSON batch)',
          description: `At most ${settings.batchMaxRequests} requests (BATCH_MAX_REQUESTS) and BATCH_MAX_BYTES; each answers what it would alone. An atomicity group is all or nothing; a failed dependency answers 424 (DESIGN §12). Policies apply per request.`,
          parameters: [paramRef('Idempotency-Key')],
          requestBody: { required: true, content: json(ref('BatchRequest')) },
          responses: {
            200: { description: 'The answers, in request order.', content: json(ref('BatchResponse')) },
            202: COMMAND_ACCEPTED,
          },
        },
        [400, 405, 409, 413, 415],
      ),
    },
    '/Commands/{id}': {
      get: operation(
        POLICY.default,
        {
          id: 'getCommand',
          tag: 'Commands',
          summary: 'The state of a write answered 202',
          description: 'Only the caller who sent the command sees it; to anyone else it does not exist.',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'The state.', content: json(ref('CommandState')) } },
        },
        [400, 404],
      ),
    },
    '/Roles': {
      get: operation(
        'any',
        {
          id: 'whoAmI',
          tag: 'Roles',
          summary: 'The caller and its roles',
          responses: { 200: { description: 'The caller.', content: json(ref('Caller')) } },
        },
        [],
      ),
    },
    '/Roles/Available': {
      get: operation(
        POLICY.default,
        {
          id: 'listRoles',
          tag: 'Roles',
          summary: 'The roles the service knows',
          responses: { 200: { description: 'Roles.', content: json({ type: 'array', items: ref('AvailableRole') }) } },
        },
        [],
      ),
    },
    '/Roles/Assignments': {
      get: operation(
        POLICY.adminOnly,
        {
          id: 'listRoleAssignments',
          tag: 'Roles',
          summary: 'Roles granted by the service',
          parameters: [
            queryParam('subject', { type: 'string' }, 'Only this subject.'),
            queryParam('role', { enum: ['User', 'Admin'] }, 'Only this role.'),
          ],
          responses: {
            200: { description: 'Grants.', content: json({ type: 'array', items: ref('RoleAssignment') }) },
          },
        },
        [400],
      ),
      post: operation(
        POLICY.adminOnly,
        {
          id: 'createRoleAssignment',
          tag: 'Roles',
          summary: 'Grant a role',
          requestBody: { required: true, content: json(ref('RoleAssignmentWrite')) },
          responses: {
            201: {
              description: 'Granted.',
              headers: { Location: requiredHeader('Location') },
              content: json(ref('RoleAssignment')),
            },
          },
        },
        [400, 409, 413, 415],
      ),
    },
    '/Roles/Assignments/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: operation(
        POLICY.adminOnly,
        {
          id: 'getRoleAssignment',
          tag: 'Roles',
          summary: 'One grant',
          responses: { 200: { description: 'The grant.', content: json(ref('RoleAssignment')) } },
        },
        [400, 404],
      ),
      delete: operation(
        POLICY.adminOnly,
        {
          id: 'deleteRoleAssignment',
          tag: 'Roles',
          summary: 'Revoke a grant',
          responses: { 204: { description: 'Revoked.' } },
        },
        [400, 404],
      ),
    },
    ...subscriptionPaths(settings),
    '/Jobs': {
      get: operation(
        POLICY.adminOnly,
        {
          id: 'listJobs',
          tag: 'Jobs',
          summary: 'Recent jobs of every queue',
          parameters: [...JOB_LISTING_PARAMS].map((name) => {
            switch (name) {
              case 'queue':
                return queryParam('queue', { enum: [...ALL_QUEUES] }, 'Only this queue.');
              case 'state':
                return queryParam('state', { enum: [...JOB_STATES] }, 'Only jobs in this state.');
              default:
                return paramRef(name);
            }
          }),
          responses: {
            200: {
              description: 'Jobs, most recent first.',
              headers: { 'X-Total-Count': headerRef('X-Total-Count'), Link: headerRef('Link') },
              content: json({ type: 'array', items: ref('JobEntry') }),
            },
          },
        },
        [400, 404],
      ),
    },
    '/Jobs/RebuildViews': {
      post: operation(
        POLICY.adminOnly,
        { id: 'rebuildViews', tag: 'Jobs', summary: 'Rebuild the read models', responses: { 202: jobAccepted } },
        [404],
      ),
    },
    '/Jobs/{queue}/{id}': {
      parameters: queueParams,
      get: operation(
        POLICY.adminOnly,
        {
          id: 'getJob',
          tag: 'Jobs',
          summary: 'One job',
          responses: { 200: { description: 'The job.', content: json(ref('JobEntry')) } },
        },
        [400, 404],
      ),
    },
    '/Jobs/{queue}/{id}/retry': {
      parameters: queueParams,
      post: operation(
        POLICY.adminOnly,
        { id: 'retryJob', tag: 'Jobs', summary: 'Retry a failed job', responses: { 202: jobAccepted } },
        [400, 404, 409],
      ),
    },
    '/health/live': open('live', 'Service', 'Liveness: the process answers', {
      200: { description: 'Alive.', content: json(ref('Liveness')) },
    }),
    '/health/ready': open(
      'ready',
      'Service',
      'Readiness: Postgres and Redis answer',
      { 200: { description: 'Ready.', content: json(ref('Readiness')) } },
      [503],
    ),
    '/metrics': open(
      'metrics',
      'Service',
      'Prometheus metrics (only with METRICS_ENABLED=true; a 404 otherwise)',
      { 200: text('Prometheus text exposition format.') },
      [404, 503],
    ),
    '/openapi.json': {
      get: operation(
        'none',
        {
          id: 'openapi',
          tag: 'Service',
          summary: 'This document',
          parameters: [
            paramRef('If-None-Match'),
            {
              name: 'flat',
              in: 'query',
              required: false,
              schema: { type: 'boolean', default: false },
              description:
                'With `true`, the flat form for client generators that cannot follow schemas referring to each other in a loop: a related or expanded entity is the open `RelatedEntity` (`{ Id }` and whatever `$expand` brought) instead of its own schema (docs/api.md).',
            },
          ],
          responses: {
            200: {
              description: 'OpenAPI 3.1.',
              headers: { ETag: requiredHeader('ETag') },
              content: json({ type: 'object' }),
            },
            304: { description: 'Not modified.', headers: { ETag: headerRef('ETag') } },
          },
        },
        [400],
      ),
    },
    '/admin/queues': {
      get: operation(
        POLICY.adminOnly,
        {
          id: 'bullBoard',
          tag: 'Jobs',
          summary: 'Bull Board: the queues in a browser',
          description:
            'With a bearer token, judged by it. With the OIDC login configured (BULL_BOARD_OIDC_*), a browser (`Accept: text/html`) without a session is sent to the issuer (302) and comes back with an httpOnly session cookie; a logged-in non-Admin gets a 403 page. Its scripts, styles and own API live under this path too; they are Bull Board’s and not described here.',
          responses: {
            200: text('The Bull Board page.', 'text/html'),
            302: {
              description: 'A browser without a session: to the issuer’s login.',
              headers: { Location: requiredHeader('Location') },
            },
            403: {
              description: 'The caller is not an Admin: a page for a browser session, a problem otherwise.',
              content: { 'text/html': { schema: { type: 'string' } }, [PROBLEM_TYPE]: { schema: ref('Problem') } },
            },
          },
        },
        [],
      ),
    },
    '/admin/queues/auth/callback': open(
      'bullBoardLoginCallback',
      'Jobs',
      'Where the issuer sends the browser back after a login (OIDC authorization code with PKCE)',
      {
        200: text('A page that moves on to Bull Board (the session cookie is set).', 'text/html'),
        302: { description: 'Elsewhere.', headers: { Location: requiredHeader('Location') } },
      },
      [400, 401, 403, 404, 503],
    ),
    '/admin/queues/auth/logout': open(
      'bullBoardLogout',
      'Jobs',
      'Ends the Bull Board session (and the issuer’s, where it offers that)',
      {
        302: {
          description: 'To the issuer’s logout, then back.',
          headers: { Location: requiredHeader('Location') },
        },
      },
      [401, 403, 404, 503],
    ),
    '/admin/queues/auth/logged-out': open(
      'bullBoardLoggedOut',
      'Jobs',
      'The page after a logout',
      { 200: text('Logged out.', 'text/html') },
      [401, 403, 404],
    ),
    '/docs': open('docs', 'Service', 'The interactive reference of this document', {
      200: text('Swagger UI.', 'text/html'),
    }),
    '/docs/{asset}': {
      get: operation(
        'none',
        {
          id: 'docsAsset',
          tag: 'Service',
          summary: 'A file of the reference page (Swagger UI, served by the service itself)',
          description:
            'Any other name is not one of these files: it reaches the authenticated routes (401 without a token, 404 with one).',
          parameters: [
            { name: 'asset', in: 'path', required: true, schema: { enum: [...DOCS_ASSETS, DOCS_INIT_FILE] } },
          ],
          responses: {
            200: {
              description: 'The file.',
              content: Object.fromEntries(
                ['text/css', 'text/javascript', 'image/png'].map((type) => [type, { schema: { type: 'string' } }]),
              ),
            },
          },
        },
        [401, 404, 429],
      ),
    },
  };
}

/** `GET /Changes` (DESIGN §16): the activity log as Server-Sent Events. */
function changesPath(): Record<string, unknown> {
  const activityId = { type: 'string', pattern: '^[A-Za-z0-9_-]{6}(==)?$' };
  return {
    '/Changes': {
      get: operation(
        POLICY.default,
        {
          id: 'streamChanges',
          tag: 'Changes',
          summary: 'The activity log, live, as Server-Sent Events',
          description: [
            'A stream that never ends by itself. It opens with a `retry:` field, then each new activity-log entry is one event: `id:` its Id (as `GET /Activities` shows it), `event:` its EventType, `data:` the entry exactly as `GET /Activities/{key}` answers it. A `: keep-alive` comment comes every CHANGES_HEARTBEAT_MS (15 s).',
            'Without `Last-Event-ID` or `since` the stream starts now; with one, every entry after that Id comes first, then the live ones: nothing missed, nothing twice, in increasing Id order (entries are committed in Id order).',
            'A client that falls more than CHANGES_MAX_BUFFER_BYTES behind is dropped (a last comment says why): reconnect with `Last-Event-ID`.',
          ].join('\n\n'),
          parameters: [
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              schema: activityId,
              description:
                'The id of the last event received (an EventSource sends it when it reconnects); wins over `since`.',
            },
            queryParam(
              'since',
              activityId,
              'Start after this Activity Id (what `Last-Event-ID` says, for clients that cannot set headers).',
            ),
          ],
          responses: {
            200: {
              description: 'The stream (`text/event-stream`, UTF-8).',
              headers: { 'Cache-Control': { schema: { const: 'no-cache' }, required: true } },
              content: { [EVENT_STREAM]: { schema: { type: 'string' } } },
            },
          },
        },
        [400, 406],
      ),
    },
  };
}

/** The methods a path item documents for a route: what it serves, and what it refuses with 405. */
function documentedMethods(route: Route): string[] {
  if (route.mount) return ['get'];
  const refused = Array.isArray(route.refuse?.methods) ? (route.refuse.methods as string[]) : [];
  return [...Object.keys(route.operations), ...refused].map((method) => method.toLowerCase()).sort();
}

/**
 * The document's paths, in table order, each the description of its table route. A `$batch` may
 * hold the operations marked `x-batch` (DESIGN §12): a route's batch steps, and what such a route
 * refuses (answered inside a batch as alone).
 */
export function pathsOf(routes: readonly Route[], described: Record<string, unknown>): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const route of routes) {
    const label = labelOf(route);
    const item = described[label] as Record<string, unknown> | undefined;
    if (!item) throw new Error(`the route ${label} has no OpenAPI description (api/openapi/document.ts)`);
    const methods = Object.keys(item).filter((key) => key !== 'parameters');
    if (methods.sort().join() !== documentedMethods(route).join()) {
      throw new Error(`${label} is described for ${methods.join(', ')}, not ${documentedMethods(route).join(', ')}`);
    }
    const batch = Object.values(route.operations).some((operation) => operation.batch);
    paths[label] = batch
      ? Object.fromEntries(
          Object.entries(item).map(([key, value]) =>
            key === 'parameters' ? [key, value] : [key, { ...(value as Operation), 'x-batch': true }],
          ),
        )
      : item;
  }
  const stray = Object.keys(described).filter((label) => !(label in paths));
  if (stray.length) throw new Error(`described but not in the route table: ${stray.join(', ')}`);
  return paths;
}

/** The operations of every route, by the route's label (its path in the document). */
export function describedPaths(settings: DocumentSettings): Record<string, unknown> {
  const described: Record<string, unknown> = {};
  for (const entity of [...ENTITIES, ...READ_MODELS]) Object.assign(described, entityPaths(entity, settings));
  Object.assign(described, servicePaths(settings));
  Object.assign(described, changesPath());
  for (const entity of [...ENTITIES, ...READ_MODELS]) Object.assign(described, exportPath(entity));
  return described;
}

/** Builds the document (call through `openApiDocument`, which keeps it). */
export function buildOpenApiDocument(settings: DocumentSettings, form: SchemaForm = 'nested'): Record<string, unknown> {
  // The routes under `/odata` are described by its own `$metadata` (DESIGN §17), named below.
  const paths = pathsOf(
    ROUTES.filter((route) => route.root === ROOT),
    describedPaths(settings),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Entity Management API',
      version: '1.0.0',
      description: [
        'Schemes, companies, addresses, developments, investment and occupier events and their reference data, read with OData options and written through commands.',
        'Every request except `/health/*`, `/metrics`, `/openapi.json` and `/docs` needs a bearer JWT; the roles each operation needs are in its security requirement.',
        `A path segment that is not valid percent-encoding answers a 400 problem. Any other path answers a 404 problem, and a method a path does not take a 404 or 405 problem (with \`Allow\`). Every client error is \`${PROBLEM_TYPE}\`. \`OPTIONS\` answers the CORS preflight (204, with CORS_ORIGINS set) or, from an authenticated caller, 200 with \`Allow\` listing the methods of the path (also as the text/plain body).`,
        'A `POST /$batch` may hold the operations marked `x-batch: true` (the entity routes); any other request in it answers its own 404 or 405 problem.',
        'Writes are applied by command workers: one still running after COMMAND_TIMEOUT_MS answers 202 with `Location: /Commands/{id}`.',
        `OData clients (Excel, Power BI, generated clients) use the OData service root \`${ODATA_ROOT}\`: the same entities, read and written (POST, PATCH as merge, PUT, DELETE), in the OData JSON format, described by its CSDL at \`${ODATA_ROOT}/$metadata\` rather than here (the service document and \`$metadata\` need no token).`,
      ].join('\n\n'),
      'x-odata': { serviceRoot: ODATA_ROOT, metadata: `${ODATA_ROOT}/$metadata` },
    },
    servers: [{ url: '/' }],
    tags: [
      ...[...ENTITIES, ...READ_MODELS].map((e) => ({ name: e.route })),
      { name: 'Batch' },
      { name: 'Commands' },
      { name: 'Roles' },
      { name: 'Subscriptions', description: 'Signed webhooks (DESIGN §16).' },
      { name: 'Jobs' },
      { name: 'Export' },
      { name: 'Changes' },
      { name: 'Service' },
    ],
    paths,
    components: {
      schemas: componentSchemas(form),
      parameters: readParameters(settings),
      headers: HEADERS,
      responses: problemResponses(),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A JWT from the configured issuer; roles come from its roles claim and from /Roles/Assignments.',
        },
      },
    },
  };
}
