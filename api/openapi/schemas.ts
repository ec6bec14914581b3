import { DESIGN_BATCH_EXAMPLE } from '../../domain/batch/batch-example';
import {
  ENTITIES,
  OWNED_RECORDS,
  READ_MODELS,
  entityByName,
  ownedRecordByName,
  type CollectionField,
  type EntityDefinition,
  type ScalarField,
} from '../../domain/entities';
import { AVAILABLE_ROLES } from '../../domain/auth/roles';
import { MAX_SUBJECT_LENGTH } from '../../domain/auth/role-assignment';
import { STATUS_OF } from '../http/problem-status';
import { NODE_KEYWORD } from '../../domain/validation/ajv-instance';
import { scalarSchema, writeSchemaOf, writeValidatorOf } from '../../domain/validation/write-schemas';
import { PATCH_OPS } from '../../domain/writes/json-patch';
import { ALL_QUEUES } from '../../domain/queues/queue-contracts';
import { JOB_STATES } from '../jobs/job-listing';
import { ALL_EVENT_NAMES } from '../../domain/events/domain-event';

/**
 * The JSON schemas of the OpenAPI document (components.schemas), derived from the entity
 * definitions: write bodies are the very ajv schemas the API validates with
 * (domain/validation/write-schemas.ts) without their `x-node` annotations; read representations
 * follow the definitions as db/query/representation.sql.ts builds them (`Id`, every field, every
 * relation as `{ Id }`, null or the expanded entity, the always-populated collections).
 */

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** A deep copy without the annotations the error messages are worded from. */
function withoutAnnotations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAnnotations);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (key !== NODE_KEYWORD) out[key] = withoutAnnotations(v);
  return out;
}

/**
 * Values a Postgres `numeric` or `date` column can hold that JSON has no literal for: reads show
 * them as these strings. The API never writes them (JSON has no NaN; dates are checked); only rows
 * written to the database directly can hold them.
 */
const NON_FINITE: Record<string, string[]> = {
  number: ['NaN', 'Infinity', '-Infinity'],
  date: ['infinity', '-infinity'],
};

/** A field as a read shows it: its type and format (what the database holds), no write limits. */
function readFieldSchema(field: ScalarField): Schema {
  const full = withoutAnnotations(scalarSchema(field)) as Schema;
  const s: Schema = { type: full.type };
  if (field.kind === 'datetime') s.type = field.required ? 'string' : ['string', 'null'];
  if (field.kind === 'datetime') s.format = 'date-time';
  // A url column is text: the API checks what it writes, the database holds whatever was written.
  else if (full.format && field.kind !== 'wkt' && field.kind !== 'url') s.format = full.format;
  if (full.items) s.items = full.items;
  if (field.kind === 'wkt') s.description = 'Well-known text (WKT) geometry.';
  const special = NON_FINITE[field.kind];
  const out: Schema = special
    ? {
        anyOf: [s, { enum: special }],
        description: `${special.join(', ')} only for rows written to the database directly (the API never writes them).`,
      }
    : s;
  if (field.readOnly) out.readOnly = true;
  return out;
}

const nullableRef = (name: string): Schema => ({ anyOf: [ref(name), { type: 'null' }] });

/**
 * The shapes of the document. `nested`: an expanded relation or collection item is its target's own
 * schema, so the entity schemas refer to each other in loops (Scheme → Address → … → Scheme), which
 * some client generators cannot follow. `flat` (`GET /openapi.json?flat=true`): every related entity
 * is the open `RelatedEntity` (an `Id` and whatever `$expand` brought), so no schema reaches itself.
 */
export type SchemaForm = 'nested' | 'flat';

/** The flat form's related entity: `{ Id }`, or more members when expanded. */
const RELATED_ENTITY: Schema = {
  type: 'object',
  description:
    'A related entity: `{ Id }`, or with `$expand` the whole entity as its own schema describes it (this flat form of the document leaves it open so that no schema refers back to itself).',
  properties: { Id: { type: 'string' } },
  required: ['Id'],
  additionalProperties: true,
};

/** What a related entity is in this form: its target's schema (nested) or RelatedEntity (flat). */
const relatedRef = (target: string, form: SchemaForm): Schema =>
  form === 'flat' && !ownedRecordByName(target) ? ref('RelatedEntity') : ref(target);

/** An item of a collection: the whole target, or its reduced form on lists (spec 2.2). */
function collectionItemSchema(name: string, collection: CollectionField, form: SchemaForm): Schema {
  const whole = relatedRef(collection.target, form);
  if (!collection.listForm || form === 'flat') return whole;
  return { anyOf: [whole, ref(reducedName(name, collection))] };
}

function reducedName(owner: string, collection: CollectionField): string {
  return `${collection.target}ListFormIn${owner}`;
}

function readSchemaOf(entity: EntityDefinition, form: SchemaForm): Schema {
  const properties: Schema = { Id: { type: 'string', readOnly: true, description: `The encoded ${entity.name} Id.` } };
  const required = ['Id'];
  for (const [name, field] of Object.entries(entity.fields)) {
    properties[name] = readFieldSchema(field);
    required.push(name);
  }
  for (const [name, relation] of Object.entries(entity.relations)) {
    // `{ Id }` unless expanded, then the whole related entity; null when unset.
    const expanded = relatedRef(relation.target, form);
    properties[name] = {
      anyOf: [
        ...(form === 'flat' ? [expanded] : [ref('EntityReference'), expanded]),
        ...(relation.required ? [] : [{ type: 'null' }]),
      ],
      ...(form === 'flat' ? { description: `A ${relation.target}: \`{ Id }\` unless expanded.` } : {}),
    };
    required.push(name);
  }
  for (const [name, collection] of Object.entries(entity.collections)) {
    properties[name] = {
      type: 'array',
      items: collectionItemSchema(entity.name, collection, form),
      description:
        (form === 'flat' && !ownedRecordByName(collection.target) ? `Items are ${collection.target} entities. ` : '') +
        (collection.alwaysPopulated
          ? 'Always present.'
          : `Present when expanded ($expand=${name}).${collection.owned ? ' Written as part of the body.' : ''}`),
    };
    if (collection.alwaysPopulated) required.push(name);
  }
  return {
    type: 'object',
    title: entity.name,
    properties,
    required,
    additionalProperties: false,
  };
}

function readSchemaOfOwned(name: string): Schema {
  const record = ownedRecordByName(name)!;
  const properties: Schema = { Id: { type: 'string', readOnly: true } };
  for (const [field, def] of Object.entries(record.fields)) properties[field] = readFieldSchema(def);
  return {
    type: 'object',
    title: name,
    properties,
    required: ['Id', ...Object.keys(record.fields)],
    additionalProperties: false,
  };
}

/** The members a list shows of a collection that is not expanded (`listForm`). */
function reducedSchemaOf(collection: CollectionField): Schema {
  const target = entityByName(collection.target);
  const properties: Schema = { Id: { type: 'string', readOnly: true } };
  for (const member of collection.listForm ?? []) {
    const field = target.fields[member];
    const relation = target.relations[member];
    if (field) properties[member] = readFieldSchema(field);
    else if (relation) properties[member] = relation.required ? ref('EntityReference') : nullableRef('EntityReference');
  }
  return {
    type: 'object',
    description: `The reduced form lists show when the collection is not expanded.`,
    properties,
    required: ['Id', ...(collection.listForm ?? [])],
    additionalProperties: false,
  };
}

const PROBLEM: Schema = {
  type: 'object',
  description: 'RFC 7807 problem (spec §7).',
  properties: {
    type: { const: 'about:blank' },
    title: { type: 'string', enum: [...new Set(Object.values(STATUS_OF).map((s) => s.title))] },
    status: { type: 'integer', enum: [...new Set(Object.values(STATUS_OF).map((s) => s.status))] },
    detail: { type: 'string' },
    extensions: {
      type: 'object',
      properties: { errors: { type: 'array', items: { type: 'string' } } },
      required: ['errors'],
      additionalProperties: false,
    },
  },
  required: ['type', 'title', 'status'],
  additionalProperties: false,
  examples: [
    {
      type: 'about:blank',
      title: 'Validation Failed',
      status: 400,
      extensions: { errors: ['Scheme.SchemeName: is required'] },
    },
  ],
};

const PATCH_OPERATION: Schema = {
  type: 'object',
  description: 'One RFC 6902 operation; paths name members of the entity as a keyed GET shows it.',
  properties: {
    op: { enum: [...PATCH_OPS] },
    path: { type: 'string' },
    from: { type: 'string' },
    value: {},
  },
  required: ['op', 'path'],
};

const HEADERS_MAP: Schema = { type: 'object', additionalProperties: { type: 'string' } };

const BATCH_REQUEST: Schema = {
  type: 'object',
  description: 'OData 4.01 JSON batch (DESIGN §12).',
  properties: {
    requests: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 200 },
          method: { type: 'string', examples: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] },
          url: {
            type: 'string',
            maxLength: 8192,
            description: 'Relative to the service root, or `$<id>` of an earlier request that created an entity.',
          },
          atomicityGroup: { type: 'string', minLength: 1, maxLength: 200 },
          dependsOn: { type: 'array', items: { type: 'string' } },
          headers: HEADERS_MAP,
          body: {},
        },
        required: ['id', 'method', 'url'],
        additionalProperties: false,
      },
    },
  },
  required: ['requests'],
  examples: [{ requests: DESIGN_BATCH_EXAMPLE }],
};

const BATCH_RESPONSE: Schema = {
  type: 'object',
  properties: {
    responses: {
      type: 'array',
      items: {
        type: 'object',
        description: 'What the request alone would have answered: an entity, a list, a problem or nothing.',
        properties: {
          id: { type: 'string' },
          status: { type: 'integer' },
          headers: HEADERS_MAP,
          body: {},
        },
        required: ['id', 'status', 'headers'],
        additionalProperties: false,
      },
    },
  },
  required: ['responses'],
  additionalProperties: false,
};

const COMMAND_STATE: Schema = {
  type: 'object',
  description: 'The state of a write answered 202 (DESIGN §10).',
  properties: {
    Id: { type: 'string', format: 'uuid' },
    State: { enum: ['Pending', 'Succeeded', 'Failed'] },
    Location: { type: 'string', description: 'The entity written, once Succeeded (not for deletes).' },
    Problem: ref('Problem'),
    Response: { ...ref('BatchResponse'), description: "A `$batch`'s response, once Succeeded." },
  },
  required: ['Id', 'State'],
  additionalProperties: false,
};

const ROLE_NAMES = AVAILABLE_ROLES.map((r) => r.Name);

const ROLE_SCHEMAS: Record<string, Schema> = {
  Caller: {
    type: 'object',
    properties: { Subject: { type: 'string' }, Roles: { type: 'array', items: { enum: ROLE_NAMES } } },
    required: ['Subject', 'Roles'],
    additionalProperties: false,
  },
  AvailableRole: {
    type: 'object',
    properties: { Name: { enum: ROLE_NAMES }, Description: { type: 'string' } },
    required: ['Name', 'Description'],
    additionalProperties: false,
  },
  RoleAssignment: {
    type: 'object',
    properties: {
      Id: { type: 'string', readOnly: true },
      Subject: { type: 'string' },
      Role: { enum: ROLE_NAMES },
      CreatedAt: { type: 'string', format: 'date-time', readOnly: true },
      CreatedBy: { type: 'string', readOnly: true },
    },
    required: ['Id', 'Subject', 'Role', 'CreatedAt', 'CreatedBy'],
    additionalProperties: false,
  },
  RoleAssignmentWrite: {
    type: 'object',
    description: '`Id`, `CreatedAt` and `CreatedBy` may be sent back unchanged from a GET; they are ignored.',
    properties: {
      Subject: { type: 'string', minLength: 1, maxLength: MAX_SUBJECT_LENGTH },
      Role: { enum: ROLE_NAMES },
      Id: {},
      CreatedAt: {},
      CreatedBy: {},
    },
    required: ['Subject', 'Role'],
    additionalProperties: false,
    examples: [{ Subject: 'auth0|alice', Role: 'Admin' }],
  },
};

const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };

const JOB_ENTRY: Schema = {
  type: 'object',
  description: 'A BullMQ job as /Jobs shows it (DESIGN §10).',
  properties: {
    Queue: { enum: [...ALL_QUEUES] },
    Id: { type: 'string' },
    Name: { type: 'string' },
    State: { enum: [...JOB_STATES, 'unknown'] },
    Attempts: { type: 'integer', minimum: 0 },
    Progress: {},
    CreatedAt: nullableDateTime,
    ProcessedAt: nullableDateTime,
    FinishedAt: nullableDateTime,
    FailedReason: { type: ['string', 'null'] },
  },
  required: ['Queue', 'Id', 'Name', 'State', 'Attempts', 'Progress', 'CreatedAt', 'ProcessedAt', 'FinishedAt'],
  additionalProperties: false,
};

const HEALTH: Record<string, Schema> = {
  Liveness: {
    type: 'object',
    properties: { status: { const: 'ok' } },
    required: ['status'],
    additionalProperties: false,
  },
  Readiness: {
    type: 'object',
    properties: {
      status: { const: 'ready' },
      checks: {
        type: 'object',
        properties: { postgres: { enum: ['ok', 'down'] }, redis: { enum: ['ok', 'down'] } },
        required: ['postgres', 'redis'],
        additionalProperties: false,
      },
      replicas: {
        type: 'array',
        description: 'With DATABASE_REPLICA_URLS: each replica, its state and lag at the last probe.',
        items: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'host:port/database' },
            state: { enum: ['up', 'down'] },
            lagMs: { type: ['number', 'null'], minimum: 0 },
          },
          required: ['name', 'state', 'lagMs'],
          additionalProperties: false,
        },
      },
    },
    required: ['status', 'checks'],
    additionalProperties: false,
  },
};

/** Every schema of the document, by name. */
const EVENT_PATTERN: Schema = {
  type: 'string',
  minLength: 1,
  description: `An event type (${ALL_EVENT_NAMES.slice(0, 3).join(', ')}, …: \`<Entity>Created|Updated|Deleted\`), a prefix ending in \`*\` (\`Scheme*\`) or \`*\` alone.`,
};

/** `/Subscriptions` (DESIGN §16). */
const WEBHOOK_SCHEMAS: Record<string, Schema> = {
  Subscription: {
    type: 'object',
    description: 'A webhook subscription as GET shows it: never its secret.',
    properties: {
      Id: { type: 'string', readOnly: true },
      Url: { type: 'string', format: 'uri' },
      Events: { type: 'array', items: EVENT_PATTERN, minItems: 1 },
      Description: { type: ['string', 'null'] },
      Active: { type: 'boolean' },
      CreatedAt: { type: 'string', format: 'date-time', readOnly: true },
      UpdatedAt: { type: 'string', format: 'date-time', readOnly: true },
    },
    required: ['Id', 'Url', 'Events', 'Description', 'Active', 'CreatedAt', 'UpdatedAt'],
    additionalProperties: false,
  },
  SubscriptionCreated: {
    type: 'object',
    description: 'The subscription just created, with its signing secret: shown this once, never again (store it now).',
    properties: {
      Id: { type: 'string' },
      Url: { type: 'string', format: 'uri' },
      Events: { type: 'array', items: EVENT_PATTERN, minItems: 1 },
      Description: { type: ['string', 'null'] },
      Active: { type: 'boolean' },
      CreatedAt: { type: 'string', format: 'date-time' },
      UpdatedAt: { type: 'string', format: 'date-time' },
      Secret: {
        type: 'string',
        pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
        description: '`whsec_` + base64 of 32 random bytes: the Standard Webhooks signing key.',
      },
    },
    required: ['Id', 'Url', 'Events', 'Description', 'Active', 'CreatedAt', 'UpdatedAt', 'Secret'],
    additionalProperties: false,
  },
  SubscriptionWrite: {
    type: 'object',
    description:
      '`Url`: http(s), no credentials, a host resolving to public addresses only (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS). `Active` defaults to true. `Id`, `CreatedAt`, `UpdatedAt` may be sent back from a GET; they are ignored.',
    properties: {
      Url: { type: 'string', format: 'uri' },
      Events: { type: 'array', items: EVENT_PATTERN, minItems: 1 },
      Description: { type: ['string', 'null'] },
      Active: { type: 'boolean' },
      Id: {},
      CreatedAt: {},
      UpdatedAt: {},
    },
    required: ['Url', 'Events'],
    additionalProperties: false,
    examples: [
      { Url: 'https://hooks.example.com/emapi', Events: ['SchemeCreated', 'Company*'], Description: 'CRM sync' },
    ],
  },
  Delivery: {
    type: 'object',
    description: 'One delivery attempt of one event to the subscription.',
    properties: {
      Id: { type: 'string' },
      EventId: { type: 'string', format: 'uuid', description: 'The `webhook-id` sent (the event id).' },
      EventType: { type: 'string' },
      Attempt: { type: 'integer', minimum: 1 },
      StatusCode: { type: ['integer', 'null'], description: "The receiver's HTTP status; null when none came." },
      DurationMs: { type: 'integer', minimum: 0 },
      Error: { type: ['string', 'null'], description: 'Why the attempt failed; null when delivered.' },
      NextRetryAt: { type: ['string', 'null'], format: 'date-time', description: 'When the next attempt is due.' },
      AttemptedAt: { type: 'string', format: 'date-time' },
    },
    required: [
      'Id',
      'EventId',
      'EventType',
      'Attempt',
      'StatusCode',
      'DurationMs',
      'Error',
      'NextRetryAt',
      'AttemptedAt',
    ],
    additionalProperties: false,
  },
};

export function componentSchemas(form: SchemaForm = 'nested'): Record<string, Schema> {
  const schemas: Record<string, Schema> = {
    Problem: PROBLEM,
    EntityReference: {
      type: 'object',
      description: 'A related entity as reads show it unless expanded, and as writes name it.',
      properties: { Id: { type: 'string' } },
      required: ['Id'],
      additionalProperties: false,
    },
    JsonPatch: { type: 'array', items: ref('JsonPatchOperation') },
    JsonPatchOperation: PATCH_OPERATION,
    BatchRequest: BATCH_REQUEST,
    BatchResponse: BATCH_RESPONSE,
    CommandState: COMMAND_STATE,
    JobEntry: JOB_ENTRY,
    ...ROLE_SCHEMAS,
    ...WEBHOOK_SCHEMAS,
    ...HEALTH,
  };
  if (form === 'flat') schemas.RelatedEntity = RELATED_ENTITY;
  for (const entity of [...ENTITIES, ...READ_MODELS]) {
    schemas[entity.name] = readSchemaOf(entity, form);
    for (const collection of Object.values(entity.collections)) {
      if (collection.listForm && form === 'nested') {
        schemas[reducedName(entity.name, collection)] = reducedSchemaOf(collection);
      }
    }
  }
  for (const record of OWNED_RECORDS) schemas[record.name] = readSchemaOfOwned(record.name);
  for (const entity of ENTITIES) {
    schemas[writeSchemaName(entity)] = {
      ...(withoutAnnotations(writeSchemaOf(entity)) as Schema),
      description: `The body of POST and PUT, and what a PATCH must leave. Read-only members (Id, CreatedAt, UpdatedAt) and collections that are not owned may be sent back as read; they are ignored.`,
      examples: writeExampleOf(entity),
    };
  }
  return schemas;
}

/** A value of each kind that its usual limits accept (the write validator has the last word). */
function sampleOf(name: string, field: ScalarField): unknown {
  switch (field.kind) {
    case 'integer':
      return Math.max(field.minimum ?? 0, Math.min(field.maximum ?? 120, 120));
    case 'number':
      return Math.max(field.minimum ?? 0, Math.min(field.maximum ?? 2500.5, 0.25 * (field.maximum ?? 10002)));
    case 'date':
      return '2027-03-31';
    case 'url':
      return 'https://example.com/';
    case 'wkt':
      return 'POLYGON((0 0, 1 0, 1 1, 0 0))';
    default: {
      const pattern = field.pattern;
      if (!pattern) return `${name} example`;
      return ['GB', 'GBP', 'A1'].find((candidate) => new RegExp(pattern).test(candidate)) ?? `${name} example`;
    }
  }
}

/**
 * An example write body: every writable field and the required relations, kept only as far as the
 * API's own validator accepts it (a member it refuses is left out; none at all if it still fails).
 */
function writeExampleOf(entity: EntityDefinition): Record<string, unknown>[] {
  const body: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(entity.fields)) if (!field.readOnly) body[name] = sampleOf(name, field);
  for (const [name, relation] of Object.entries(entity.relations)) {
    if (relation.required) body[name] = { Id: `${relation.target}Id` };
  }
  const validate = writeValidatorOf(entity);
  if (!validate(body)) {
    for (const error of validate.errors ?? []) delete body[error.instancePath.split('/')[1] ?? ''];
  }
  return validate(body) ? [body] : [];
}

export function writeSchemaName(entity: EntityDefinition): string {
  return `${entity.name}Write`;
}
