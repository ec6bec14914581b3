import { ENTITIES, READ_MODELS, type EntityDefinition } from '../../../domain/entities';
import type { MetadataSettings } from './metadata-settings';
import { setCapabilities } from './set-capabilities';
import {
  NAMESPACE,
  annotated,
  complexTypeNameOf,
  complexTypeOf,
  entityTypeOf,
  isComplexCollection,
  qualified,
} from './structured-types';
import { VOCABULARIES, type AnnotationValue } from './vocabularies';

/**
 * The service's model (DESIGN §17) in the shape of CSDL JSON, except that enum and path values are
 * still EnumValue/PathValue: csdl-json.ts and csdl-xml.ts render this one model, so the two
 * formats cannot say different things (`$Reference` is keyed by namespace here; each format names
 * the vocabulary's document in its own format). Everything comes from the entity definitions.
 */

export const CONTAINER = 'Container';

export type CsdlModel = Record<string, unknown>;

/** Every set: the entities, then the read models (`Activities`), in the order the root lists them. */
export const SET_SOURCES: readonly EntityDefinition[] = [...ENTITIES, ...READ_MODELS];

/** `Address` → `Addresses`; `MarketBoundaries/Market` → `Markets` (through the complex items). */
function bindingsOf(entity: EntityDefinition): Record<string, string> {
  const routeOf = (name: string) => SET_SOURCES.find((e) => e.name === name)!.route;
  const out: Record<string, string> = {};
  for (const [name, relation] of Object.entries(entity.relations)) out[name] = routeOf(relation.target);
  for (const [name, collection] of Object.entries(entity.collections)) {
    if (!isComplexCollection(collection)) out[name] = routeOf(collection.target);
    else {
      const item = complexTypeOf(entity, collection);
      for (const [member, def] of Object.entries(item)) {
        const nav = def as { $Kind?: string; $Type?: string };
        if (nav.$Kind === 'NavigationProperty')
          out[`${name}/${member}`] = routeOf(nav.$Type!.slice(NAMESPACE.length + 1));
      }
    }
  }
  return out;
}

function entitySetOf(entity: EntityDefinition, settings: MetadataSettings): Record<string, unknown> {
  const bindings = bindingsOf(entity);
  return {
    $Collection: true,
    $Type: qualified(entity.name),
    ...(Object.keys(bindings).length ? { $NavigationPropertyBinding: bindings } : {}),
    ...setCapabilities(entity, settings),
  };
}

function containerOf(settings: MetadataSettings): Record<string, unknown> {
  const container: Record<string, unknown> = {
    $Kind: 'EntityContainer',
    ...annotated({
      'Core.Description': 'Entity Management API',
      'Core.LongDescription': [
        'Schemes, companies, addresses, developments, investment and occupier events and their reference data.',
        `Lists come in pages of \`Prefer: odata.maxpagesize\` (default 60, at most ${settings.maxTop}), each but the last with \`@odata.nextLink\`;`,
        `\`$top\` takes at most ${settings.maxTop} (MAX_TOP) and \`$expand\` nests at most ${settings.maxExpandDepth} levels (MAX_EXPAND_DEPTH).`,
      ].join(' '),
      'Capabilities.KeyAsSegmentSupported': true,
      // `/odata/$batch` (DESIGN §17): both formats; `$n` references within a changeset (atomicity
      // group) or, in the JSON format, to requests named in dependsOn.
      'Capabilities.BatchSupported': true,
      'Capabilities.BatchSupport': {
        Supported: true,
        ContinueOnErrorSupported: false,
        ReferencesInRequestBodiesSupported: true,
        ReferencesAcrossChangeSetsSupported: false,
        EtagReferencesSupported: false,
        SupportedFormats: ['application/json', 'multipart/mixed'],
      },
    } satisfies Record<string, AnnotationValue>),
  };
  for (const entity of SET_SOURCES) container[entity.route] = entitySetOf(entity, settings);
  return container;
}

function schemaOf(settings: MetadataSettings): Record<string, unknown> {
  const schema: Record<string, unknown> = {};
  for (const entity of SET_SOURCES) schema[entity.name] = entityTypeOf(entity);
  for (const entity of SET_SOURCES) {
    for (const collection of Object.values(entity.collections)) {
      if (isComplexCollection(collection)) schema[complexTypeNameOf(collection)] ??= complexTypeOf(entity, collection);
    }
  }
  schema[CONTAINER] = containerOf(settings);
  return schema;
}

export function csdlModel(settings: MetadataSettings): CsdlModel {
  return {
    $Version: '4.0',
    $EntityContainer: qualified(CONTAINER),
    $Reference: Object.fromEntries(
      VOCABULARIES.map((v) => [v.namespace, { $Include: [{ $Namespace: v.namespace, $Alias: v.alias }] }]),
    ),
    [NAMESPACE]: schemaOf(settings),
  };
}
