import test from 'ava';
import Ajv from 'ajv';
import { xml2json } from 'odata-csdl';
import { csdl2openapi } from 'odata-openapi';
import { csdlJson } from '../../api/odata/metadata/csdl-json';
import { csdlXml, escapeXml } from '../../api/odata/metadata/csdl-xml';
import { serviceDocument } from '../../api/odata/metadata/service-document';
import {
  ENTITIES,
  OWNED_RECORDS,
  READ_MODELS,
  entityByName,
  ownedRecordByName,
  type ScalarField,
  type ScalarKind,
} from '../../domain/entities';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';

/**
 * `$metadata` (DESIGN §17) as the OASIS TC's own tools read it, and as the entity definitions say
 * it must be. The expectations are derived from the definitions, not from the generator's helpers.
 */

/** ESM-only packages, loaded from this CommonJS build as Node loads them. */
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(specifier: string) => Promise<T>;

const settings = { maxTop: DEFAULT_READ_LIMITS.maxTop, maxExpandDepth: DEFAULT_READ_LIMITS.maxExpandDepth };
const xml = csdlXml(settings);
const json = csdlJson(settings);

type Node = Record<string, unknown>;

let read: Node | undefined;

/** The XML as odata-csdl reads it (strict: the first problem throws): what the checks below look at. */
function parsed(): Node {
  if (read) return read;
  const messages: unknown[] = [];
  const result = xml2json(xml, { strict: true, messages });
  if (messages.length) throw new Error(JSON.stringify(messages));
  return (read = result);
}

const schema = () => parsed().EntityManagement as Record<string, Node>;
const container = () => schema().Container as Record<string, Node>;

/** DESIGN §17: field kinds → Edm types, as the columns hold them (double precision → Edm.Double). */
const EDM: Record<ScalarKind, string> = {
  string: 'Edm.String',
  url: 'Edm.String',
  wkt: 'Edm.String',
  integer: 'Edm.Int32',
  number: 'Edm.Double',
  date: 'Edm.Date',
  datetime: 'Edm.DateTimeOffset',
  stringList: 'Edm.String',
};

/** A property as CSDL JSON spells it, with its defaults made explicit. */
function facets(p: Node) {
  return {
    type: (p.$Type as string | undefined) ?? 'Edm.String',
    collection: p.$Collection === true,
    nullable: p.$Nullable === true,
    maxLength: p.$MaxLength as number | undefined,
  };
}

function expectField(t: import('ava').ExecutionContext, where: string, p: Node | undefined, field: ScalarField) {
  t.truthy(p, where);
  if (!p) return;
  t.deepEqual(
    facets(p),
    {
      type: EDM[field.kind],
      collection: field.kind === 'stringList',
      // Required fields, and the timestamps the database stamps, are never null.
      nullable: !field.required && !field.readOnly && field.kind !== 'stringList',
      maxLength: field.maxLength,
    },
    where,
  );
  t.is(p.$Kind, undefined, `${where} is a structural property`);
  t.is(p['@Core.Computed'], field.readOnly ? true : undefined, `${where} Core.Computed`);
  t.is(p['@Core.Description'], field.description, `${where} Core.Description`);
  t.is(p['@Validation.Minimum'], field.minimum, `${where} minimum`);
  t.is(p['@Validation.Maximum'], field.maximum, `${where} maximum`);
  t.is(p['@Validation.Pattern'], field.pattern, `${where} pattern`);
}

test('the XML parses with odata-csdl without a message, and its CSDL JSON is exactly csdlJson', (t) => {
  t.deepEqual(parsed(), json);
});

test('csdlJson is valid under the OASIS CSDL JSON schema (odata-csdl/schemas/csdl.schema.json)', (t) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const csdlSchema = require('odata-csdl/schemas/csdl.schema.json') as Node;
  const validate = new Ajv({ strict: false, allErrors: true }).compile(csdlSchema);
  t.true(validate(json), JSON.stringify(validate.errors));
});

test('the metadata says Edmx Version 4.0, namespace EntityManagement and one EntityContainer', (t) => {
  t.regex(xml, /^<\?xml version="1\.0" encoding="utf-8"\?>\n<edmx:Edmx [^>]*Version="4\.0"/);
  t.is((xml.match(/<EntityContainer /g) ?? []).length, 1);
  const doc = parsed();
  t.is(doc.$Version, '4.0');
  t.is(doc.$EntityContainer, 'EntityManagement.Container');
  t.deepEqual(
    Object.keys(doc).filter((k) => !k.startsWith('$')),
    ['EntityManagement'],
  );
});

test('odata-openapi turns the metadata into valid OpenAPI 3.1 without a message, with the sets and methods the service serves', async (t) => {
  const messages: unknown[] = [];
  const openapi = csdl2openapi(structuredClone(parsed()), { openapiVersion: '3.1.0', basePath: '/odata', messages });
  t.deepEqual(messages, []);
  const { Validator } = await importEsm<typeof import('@seriousme/openapi-schema-validator')>(
    '@seriousme/openapi-schema-validator',
  );
  const result = await new Validator().validate(openapi);
  t.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 1));
  const paths = openapi.paths as Record<string, Record<string, unknown>>;
  for (const entity of ENTITIES) {
    t.truthy(paths[`/${entity.route}`]?.post, entity.route);
    // KeyAsSegmentSupported: odata-openapi writes keys as segments.
    for (const verb of ['get', 'patch', 'delete']) t.truthy(paths[`/${entity.route}/{Id}`]?.[verb], entity.route);
  }
  for (const model of READ_MODELS) {
    t.truthy(paths[`/${model.route}`]?.get, model.route);
    t.falsy(paths[`/${model.route}`]?.post, model.route);
    for (const verb of ['put', 'patch', 'delete']) t.falsy(paths[`/${model.route}/{Id}`]?.[verb], model.route);
  }
});

test('every entity and read model: an entity type keyed by Id, every field, relation and collection as the definition says', (t) => {
  const types = schema();
  for (const entity of [...ENTITIES, ...READ_MODELS]) {
    const type = types[entity.name] as Record<string, Node> | undefined;
    t.truthy(type, entity.name);
    if (!type) continue;
    t.is(type.$Kind as unknown, 'EntityType');
    t.deepEqual(type.$Key as unknown, ['Id']);
    t.deepEqual(facets(type.Id!), { type: 'Edm.String', collection: false, nullable: false, maxLength: undefined });
    t.is(type.Id!['@Core.Computed'], true);
    t.is(type['@Core.Description'] as unknown, entity.description);
    const members = Object.keys(type).filter((k) => !k.startsWith('$') && !k.startsWith('@'));
    t.deepEqual(
      members.sort(),
      [
        'Id',
        ...Object.keys(entity.fields),
        ...Object.keys(entity.relations),
        ...Object.keys(entity.collections),
      ].sort(),
      `${entity.name}: members`,
    );
    for (const [name, field] of Object.entries(entity.fields))
      expectField(t, `${entity.name}.${name}`, type[name], field);
    for (const [name, relation] of Object.entries(entity.relations)) {
      const nav = type[name]!;
      t.is(nav.$Kind, 'NavigationProperty', `${entity.name}.${name}`);
      t.is(nav.$Type, `EntityManagement.${relation.target}`, `${entity.name}.${name}`);
      t.is(nav.$Collection, undefined, `${entity.name}.${name}`);
      t.is(nav.$Nullable === true, !relation.required, `${entity.name}.${name} nullable`);
    }
    for (const [name, collection] of Object.entries(entity.collections)) {
      const member = type[name]!;
      t.is(member.$Collection, true, `${entity.name}.${name}`);
      if (collection.alwaysPopulated) {
        // Always populated: a collection of complex values, present on every read.
        t.is(member.$Kind, undefined, `${entity.name}.${name}`);
        const complex = types[(member.$Type as string).replace('EntityManagement.', '')] as Node | undefined;
        t.is(complex?.$Kind, 'ComplexType', `${entity.name}.${name}`);
      } else {
        t.is(member.$Kind, 'NavigationProperty', `${entity.name}.${name}`);
        t.is(member.$Type, `EntityManagement.${collection.target}`, `${entity.name}.${name}`);
      }
    }
  }
});

test('navigation properties name their Partner where both sides exist, and each Partner points back', (t) => {
  const types = schema() as Record<string, Record<string, Node>>;
  let partners = 0;
  for (const entity of [...ENTITIES, ...READ_MODELS]) {
    for (const [name, nav] of Object.entries(types[entity.name]!)) {
      if (nav.$Kind !== 'NavigationProperty') continue;
      const target = (nav.$Type as string).replace('EntityManagement.', '');
      // Both sides exist where the target has a relation back through the collection's foreign key.
      const collection = entity.collections[name];
      const relation = entity.relations[name];
      const other = collection
        ? Object.entries(entityByName(target).relations).find(
            ([, r]) => r.target === entity.name && r.column === collection.foreignKey,
          )?.[0]
        : Object.entries(entityByName(target).collections).find(
            ([, c]) => !c.alwaysPopulated && c.target === entity.name && c.foreignKey === relation!.column,
          )?.[0];
      t.is(nav.$Partner, other, `${entity.name}.${name}`);
      if (other) {
        partners++;
        t.is(types[target]![other]!.$Partner, name, `${target}.${other} points back at ${entity.name}.${name}`);
      }
    }
  }
  // Scheme.Companies/Developments, InvestmentEvent.Companies, Portfolio.InvestmentEvents, both sides.
  t.is(partners, 8);
});

test('owned records and always-populated items are complex types: Id plus their fields', (t) => {
  const types = schema() as Record<string, Record<string, Node>>;
  for (const record of OWNED_RECORDS) {
    const type = types[record.name]!;
    t.is(type.$Kind as unknown, 'ComplexType', record.name);
    t.deepEqual(
      Object.keys(type).filter((k) => !k.startsWith('$') && !k.startsWith('@')),
      ['Id', ...Object.keys(record.fields)],
    );
    // A client names an existing item by its Id, or leaves it out for a new one.
    t.is(type.Id!['@Core.ComputedDefaultValue'], true);
    t.is(type['@Core.Description'] as unknown, record.description);
    for (const [name, field] of Object.entries(record.fields))
      expectField(t, `${record.name}.${name}`, type[name], field);
  }
  const item = types.SchemeMarketBoundaryItem!;
  t.deepEqual(
    Object.keys(item).filter((k) => !k.startsWith('$') && !k.startsWith('@')),
    ['Id', 'Geometry', 'CreatedAt', 'UpdatedAt', 'Market'],
  );
  t.deepEqual(item.Market, { $Kind: 'NavigationProperty', $Type: 'EntityManagement.Market' });
});

test('every set: its entity type, a binding for every navigation path to the target set, and Capabilities as the service allows', (t) => {
  const sets = container();
  const routeOf = (name: string) => [...ENTITIES, ...READ_MODELS].find((e) => e.name === name)!.route;
  for (const entity of [...ENTITIES, ...READ_MODELS]) {
    const set = sets[entity.route];
    t.truthy(set, entity.route);
    if (!set) continue;
    t.is(set.$Type, `EntityManagement.${entity.name}`);
    const expected: Record<string, string> = {};
    for (const [name, r] of Object.entries(entity.relations)) expected[name] = routeOf(r.target);
    for (const [name, c] of Object.entries(entity.collections)) {
      if (!c.alwaysPopulated) expected[name] = routeOf(c.target);
      else if (!ownedRecordByName(c.target)) {
        for (const [member, r] of Object.entries(entityByName(c.target).relations)) {
          if (r.column !== c.foreignKey) expected[`${name}/${member}`] = routeOf(r.target);
        }
      }
    }
    t.deepEqual(set.$NavigationPropertyBinding ?? {}, expected, entity.route);
    const writable = !READ_MODELS.includes(entity);
    t.deepEqual(
      [
        (set['@Capabilities.InsertRestrictions'] as Node).Insertable,
        (set['@Capabilities.UpdateRestrictions'] as Node).Updatable,
        (set['@Capabilities.DeleteRestrictions'] as Node).Deletable,
      ],
      [writable, writable, writable],
      entity.route,
    );
    // Every writable set serves PATCH and PUT (no UpdateMethod: "PATCH, PUT may"); see docs/odata.md.
    t.is((set['@Capabilities.UpdateRestrictions'] as Node).UpdateMethod, undefined);
    t.is(
      (set['@Capabilities.SearchRestrictions'] as Node).Searchable,
      Object.keys(entity.searchFields).length > 0,
      entity.route,
    );
    t.is(set['@Capabilities.TopSupported'], true);
    t.is(set['@Capabilities.SkipSupported'], true);
    t.deepEqual(set['@Capabilities.CountRestrictions'], { Countable: true });
    const expand = set['@Capabilities.ExpandRestrictions'] as Node;
    if (expand.Expandable) t.is(expand.MaxLevels, 3, entity.route);
    else t.is(Object.keys(expected).length, 0, `${entity.route} has nothing to expand`);
  }
  t.deepEqual(
    Object.keys(sets).filter((k) => !k.startsWith('$') && !k.startsWith('@')),
    [...ENTITIES, ...READ_MODELS].map((e) => e.route),
  );
});

test('Schemes, by hand: name, numbers, relations, collections and what the set allows', (t) => {
  const scheme = schema().Scheme as Record<string, Node>;
  t.deepEqual(scheme.SchemeName, { $MaxLength: 300 });
  t.deepEqual(scheme.TotalUnits, { $Type: 'Edm.Int32', $Nullable: true, '@Validation.Minimum': 0 });
  t.deepEqual(scheme.TotalFloorArea, { $Type: 'Edm.Double', $Nullable: true, '@Validation.Minimum': 0 });
  t.deepEqual(scheme.CompletionDate, { $Type: 'Edm.Date', $Nullable: true });
  t.like(scheme.CreatedAt, { $Type: 'Edm.DateTimeOffset', $Precision: 3, '@Core.Computed': true });
  t.is(scheme.CreatedAt!.$Nullable, undefined);
  t.deepEqual(scheme.Address, { $Kind: 'NavigationProperty', $Type: 'EntityManagement.Address', $Nullable: true });
  t.deepEqual(scheme.Developments, {
    $Kind: 'NavigationProperty',
    $Collection: true,
    $Type: 'EntityManagement.Development',
    $Partner: 'Scheme',
  });
  t.like(scheme.Companies, {
    $Kind: 'NavigationProperty',
    $Type: 'EntityManagement.SchemeCompany',
    $Partner: 'Scheme',
  });
  for (const [name, type] of [
    ['Notes', 'Note'],
    ['Tags', 'Tag'],
    ['ExternalLinks', 'ExternalLink'],
    ['MarketBoundaries', 'SchemeMarketBoundaryItem'],
  ] as const) {
    t.like(scheme[name], { $Collection: true, $Type: `EntityManagement.${type}` });
    t.is(scheme[name]!.$Kind, undefined);
  }
  const sets = container();
  t.like(sets.Schemes, {
    '@Capabilities.InsertRestrictions': { Insertable: true, NonInsertableNavigationProperties: ['Developments'] },
    '@Capabilities.SearchRestrictions': { Searchable: true, UnsupportedExpressions: 'NOT,group' },
    '@Capabilities.ExpandRestrictions': { Expandable: true, MaxLevels: 3 },
  });
  t.like(sets.Schemes!.$NavigationPropertyBinding, {
    Address: 'Addresses',
    Companies: 'SchemeCompanies',
    'MarketBoundaries/Market': 'Markets',
  });
  const development = schema().Development as Record<string, Node>;
  t.deepEqual(development.Scheme, {
    $Kind: 'NavigationProperty',
    $Type: 'EntityManagement.Scheme',
    $Partner: 'Developments',
  });
});

test('Companies and Addresses, by hand', (t) => {
  const company = schema().Company as Record<string, Node>;
  t.deepEqual(company.Name, { $MaxLength: 300 });
  t.deepEqual(company.Website, { $Nullable: true, $MaxLength: 2000, '@Core.IsURL': true });
  t.deepEqual(company.Country, { $Kind: 'NavigationProperty', $Type: 'EntityManagement.Country', $Nullable: true });
  const address = schema().Address as Record<string, Node>;
  t.deepEqual(address.AddressLine, { $MaxLength: 500 });
  t.deepEqual(address.Postcode, { $Nullable: true, $MaxLength: 20 });
  t.deepEqual(address.Latitude, {
    $Type: 'Edm.Double',
    $Nullable: true,
    '@Core.Description': 'WGS 84 degrees.',
    '@Validation.Minimum': -90,
    '@Validation.Maximum': 90,
  });
  const country = schema().Country as Record<string, Node>;
  t.deepEqual(country.IsoCode, {
    '@Validation.Pattern': '^[A-Z]{2}$',
    '@Core.Description': 'ISO 3166-1 alpha-2 code.',
  });
  t.like(container().Companies, { '@Capabilities.SearchRestrictions': { Searchable: true } });
  t.like(container().Countries, { '@Capabilities.ExpandRestrictions': { Expandable: false } });
});

test('Activities: a read-only set; its list of changed fields a collection of strings that cannot be filtered', (t) => {
  const activity = schema().Activity as Record<string, Node>;
  t.deepEqual(activity.ChangedFields, { $Collection: true });
  t.like(container().Activities, {
    '@Capabilities.InsertRestrictions': { Insertable: false },
    '@Capabilities.UpdateRestrictions': { Updatable: false },
    '@Capabilities.DeleteRestrictions': { Deletable: false },
    '@Capabilities.FilterRestrictions': { NonFilterableProperties: ['ChangedFields'] },
  });
});

test('deployment settings reach the metadata: MAX_EXPAND_DEPTH as MaxLevels, MAX_TOP in the description', (t) => {
  const other = csdlJson({ maxTop: 250, maxExpandDepth: 2 });
  const sets = (other.EntityManagement as Record<string, Record<string, Node>>).Container!;
  t.like(sets.Schemes, { '@Capabilities.ExpandRestrictions': { MaxLevels: 2 } });
  t.regex(sets['@Core.LongDescription'] as unknown as string, /at most 250 \(MAX_TOP\)/);
});

test('descriptions survive the XML: escaped, and read back as written', (t) => {
  // Every description of the definitions comes back unchanged (apostrophes, ellipses, backticks).
  const types = schema() as Record<string, Record<string, Node>>;
  for (const entity of [...ENTITIES, ...READ_MODELS]) {
    t.is(types[entity.name]!['@Core.Description'] as unknown, entity.description);
  }
  t.false(/ String="[^"]*[<>][^"]*"/.test(xml), 'no raw angle brackets inside an attribute');
  // The characters XML gives meaning to, and line breaks, through the real parser.
  const tricky = 'a < b & c > d, "quoted" \'single\'\nnext\tline';
  t.is(escapeXml(tricky), "a &lt; b &amp; c &gt; d, &quot;quoted&quot; 'single'&#10;next&#9;line");
  const tiny = xml.replace(
    '<Annotation Term="Core.Description" String="Entity Management API"/>',
    `<Annotation Term="Core.Description" String="${escapeXml(tricky)}"/>`,
  );
  t.not(tiny, xml);
  const back = xml2json(tiny, { strict: true }) as Record<string, Record<string, Node>>;
  t.is(back.EntityManagement!.Container!['@Core.Description'] as unknown, tricky);
  t.throws(() => xml2json(xml.replace('Entity Management API', 'Entity & Management'), { strict: true }));
});

test('the service document lists every set of the container, by name, under @odata.context', (t) => {
  const doc = serviceDocument('http://localhost:3000/odata/');
  t.is(doc['@odata.context'], 'http://localhost:3000/odata/$metadata');
  t.is(serviceDocument('http://localhost:3000/odata')['@odata.context'], 'http://localhost:3000/odata/$metadata');
  const sets = Object.keys(container()).filter((k) => !k.startsWith('$') && !k.startsWith('@'));
  t.deepEqual(
    doc.value,
    sets.map((name) => ({ name, kind: 'EntitySet', url: name })),
  );
  t.true(doc.value.some((s) => s.name === 'Activities'));
});
