/**
 * The one description of an entity. Routes, SQL mapping, read representation, validation schemas,
 * export columns and docs are all derived from these definitions; nothing else lists fields.
 */

/** `stringList` is a JSON array of strings (read models only; not filterable). */
export type ScalarKind = 'string' | 'integer' | 'number' | 'date' | 'datetime' | 'url' | 'wkt' | 'stringList';

export interface ScalarField {
  kind: ScalarKind;
  /** Column in the entity's table. */
  column: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  /** Regular expression the value must match (ajv `pattern`). */
  pattern?: string;
  /** Human wording of `pattern` for error messages. */
  patternText?: string;
  /** Unique across the table (a duplicate is a 409). */
  unique?: boolean;
  /** Set by the service, never by a client (CreatedAt, UpdatedAt). */
  readOnly?: boolean;
  /** What the field means, where its name alone does not say (docs, `$metadata` Core.Description). */
  description?: string;
}

/** A single related entity (many-to-one), shown as `{ Id }` or null. */
export interface RelationField {
  target: string;
  column: string;
  required?: boolean;
}

/**
 * A related collection (one-to-many). `owned` collections are written as part of their parent's
 * body and deleted with it; `alwaysPopulated` ones appear on every read of the parent without
 * `$expand` (spec 2.2).
 */
export interface CollectionField {
  target: string;
  /** Column of the child table that points at the parent. */
  foreignKey: string;
  owned?: boolean;
  alwaysPopulated?: boolean;
  /**
   * Members shown (besides `Id`) when the parent is read as part of a collection and the
   * collection is not `$expand`ed: the reduced form of spec 2.2 (no large geometries on lists).
   */
  listForm?: readonly string[];
}

/** A child record that exists only inside its parent (Notes, Tags, ExternalLinks). */
export interface OwnedRecordDefinition {
  name: string;
  table: string;
  /**
   * The entity type that owns these records: exactly one owned collection of it targets this
   * record, and that collection's `foreignKey` is the table's parent column (deleted with it).
   */
  parent: string;
  /** One sentence on what the record is (docs, `$metadata` Core.Description). */
  description: string;
  fields: Record<string, ScalarField>;
}

export interface EntityDefinition {
  /** Entity type name: also the Id codec's type (renaming it changes every Id, spec 9). */
  name: string;
  /** Route segment, the plural (`Schemes`). */
  route: string;
  /** One sentence on what the entity is (docs, `$metadata` Core.Description). */
  description: string;
  table: string;
  /** Spec 2.3: the five routes that also accept the integer primary key. */
  acceptsBareIntegerKeys: boolean;
  /** Tables of spec 2.3 also store the encoded Id as a generated column. */
  storesEncodedId: boolean;
  fields: Record<string, ScalarField>;
  relations: Record<string, RelationField>;
  collections: Record<string, CollectionField>;
  /**
   * Rows are owned by a parent collection and keep the order they were written in (a `position`
   * column, DESIGN §10).
   */
  keepsWrittenOrder?: boolean;
  /**
   * `$search` fields (DESIGN §5): name → property path whose text is indexed, through relations
   * and collections (`Address/City`, `Companies/Company/Name`). Empty: the route offers no search.
   */
  searchFields: Readonly<Record<string, string>>;
}

/** Fields every entity has: `Id` (computed) plus timestamps. */
export const TIMESTAMP_FIELDS: Record<string, ScalarField> = {
  CreatedAt: { kind: 'datetime', column: 'created_at', readOnly: true, description: 'When the row was created (UTC).' },
  UpdatedAt: {
    kind: 'datetime',
    column: 'updated_at',
    readOnly: true,
    description: 'When the row last changed (UTC).',
  },
};

/** A company's share in an investment or a scheme: the same column and rule on both links. */
export const PERCENTAGE_SHARE_FIELD: ScalarField = {
  kind: 'number',
  column: 'percentage_share',
  minimum: 0,
  maximum: 1,
  description: 'Share as a fraction (0…1).',
};

export const READ_ONLY_MEMBERS = ['Id', 'CreatedAt', 'UpdatedAt'] as const;
