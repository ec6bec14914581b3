import { csdlModel, type CsdlModel } from './csdl-model';
import type { MetadataSettings } from './metadata-settings';
import { EnumValue, PathValue, vocabularyUri, type AnnotationValue } from './vocabularies';

/**
 * `$metadata` as CSDL XML (`Edmx Version="4.0"`), written from the same model as csdl-json.ts.
 * Only the constructs the model uses are written. The defaults differ between the formats: a
 * property without `Nullable` is nullable in XML and not nullable in JSON, a type without `$Type`
 * is Edm.String in JSON.
 */

const EDMX = 'http://docs.oasis-open.org/odata/ns/edmx';
const EDM = 'http://docs.oasis-open.org/odata/ns/edm';

type Node = Record<string, unknown>;

/** Attribute and text escaping; line breaks and tabs as references, so that parsers keep them. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '&#10;')
    .replace(/\r/g, '&#13;')
    .replace(/\t/g, '&#9;');
}

function element(name: string, attributes: Record<string, string | undefined>, children: string[] = []): string[] {
  const attrs = Object.entries(attributes)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escapeXml(v!)}"`)
    .join('');
  if (children.length === 0) return [`<${name}${attrs}/>`];
  return [`<${name}${attrs}>`, ...children.map((line) => `  ${line}`), `</${name}>`];
}

/** A constant as an attribute of its expression (`Bool="true"`), or undefined for records, collections and paths. */
function constantAttribute(value: AnnotationValue): [string, string] | undefined {
  if (typeof value === 'boolean') return ['Bool', String(value)];
  if (typeof value === 'number') return [Number.isInteger(value) ? 'Int' : 'Float', String(value)];
  if (typeof value === 'string') return ['String', value];
  if (value instanceof EnumValue) return ['EnumMember', value.members.map((m) => `${value.enumType}/${m}`).join(' ')];
  return undefined;
}

/** A value as an element expression (inside Collection). */
function expression(value: AnnotationValue): string[] {
  const constant = constantAttribute(value);
  if (constant) return [`<${constant[0]}>${escapeXml(constant[1])}</${constant[0]}>`];
  if (value instanceof PathValue) return [`<${value.kind}>${escapeXml(value.path)}</${value.kind}>`];
  if (Array.isArray(value)) return element('Collection', {}, value.flatMap(expression));
  const record = value as Record<string, AnnotationValue>;
  return element(
    'Record',
    {},
    Object.entries(record).flatMap(([property, v]) => valued('PropertyValue', { Property: property }, v)),
  );
}

/** An Annotation or PropertyValue: a constant as an attribute, anything else as a child expression. */
function valued(name: string, attributes: Record<string, string>, value: AnnotationValue): string[] {
  const constant = constantAttribute(value);
  if (constant) return element(name, { ...attributes, [constant[0]]: constant[1] });
  return element(name, attributes, expression(value));
}

function annotationsOf(node: Node): string[] {
  return Object.entries(node)
    .filter(([key]) => key.startsWith('@'))
    .flatMap(([key, value]) => valued('Annotation', { Term: key.slice(1) }, value as AnnotationValue));
}

function typeName(member: Node): string {
  const type = (member.$Type as string | undefined) ?? 'Edm.String';
  return member.$Collection ? `Collection(${type})` : type;
}

function memberXml(name: string, member: Node): string[] {
  const facet = (key: string) => (member[key] === undefined ? undefined : String(member[key]));
  if (member.$Kind === 'NavigationProperty') {
    return element(
      'NavigationProperty',
      {
        Name: name,
        Type: typeName(member),
        Nullable: member.$Collection || member.$Nullable ? undefined : 'false',
        Partner: facet('$Partner'),
      },
      annotationsOf(member),
    );
  }
  return element(
    'Property',
    {
      Name: name,
      Type: typeName(member),
      Nullable: member.$Nullable ? undefined : 'false',
      MaxLength: facet('$MaxLength'),
      Precision: facet('$Precision'),
      Scale: facet('$Scale'),
    },
    annotationsOf(member),
  );
}

function structuredTypeXml(kind: string, name: string, type: Node): string[] {
  const members = Object.entries(type).filter(([key]) => !key.startsWith('$') && !key.startsWith('@'));
  const key = type.$Key as string[] | undefined;
  return element(kind, { Name: name }, [
    ...(key
      ? element(
          'Key',
          {},
          key.flatMap((k) => element('PropertyRef', { Name: k })),
        )
      : []),
    ...members.flatMap(([member, def]) => memberXml(member, def as Node)),
    ...annotationsOf(type),
  ]);
}

function containerXml(name: string, container: Node): string[] {
  const sets = Object.entries(container).filter(([key]) => !key.startsWith('$') && !key.startsWith('@'));
  return element('EntityContainer', { Name: name }, [
    ...sets.flatMap(([setName, def]) => {
      const set = def as Node;
      const bindings = Object.entries((set.$NavigationPropertyBinding ?? {}) as Record<string, string>);
      return element('EntitySet', { Name: setName, EntityType: set.$Type as string }, [
        ...bindings.flatMap(([path, target]) => element('NavigationPropertyBinding', { Path: path, Target: target })),
        ...annotationsOf(set),
      ]);
    }),
    ...annotationsOf(container),
  ]);
}

function schemaXml(namespace: string, schema: Node): string[] {
  return element(
    'Schema',
    { xmlns: EDM, Namespace: namespace },
    Object.entries(schema).flatMap(([name, def]) => {
      const node = def as Node;
      return node.$Kind === 'EntityContainer'
        ? containerXml(name, node)
        : structuredTypeXml(node.$Kind as string, name, node);
    }),
  );
}

function referencesXml(model: CsdlModel): string[] {
  const references = model.$Reference as Record<string, { $Include: { $Namespace: string; $Alias: string }[] }>;
  return Object.entries(references).flatMap(([namespace, reference]) =>
    element(
      'edmx:Reference',
      { Uri: vocabularyUri(namespace, 'xml') },
      reference.$Include.flatMap((i) => element('edmx:Include', { Namespace: i.$Namespace, Alias: i.$Alias })),
    ),
  );
}

export function csdlXml(settings: MetadataSettings): string {
  const model = csdlModel(settings);
  const schemas = Object.entries(model).filter(([key]) => !key.startsWith('$'));
  const lines = element('edmx:Edmx', { 'xmlns:edmx': EDMX, Version: model.$Version as string }, [
    ...referencesXml(model),
    ...element(
      'edmx:DataServices',
      {},
      schemas.flatMap(([namespace, schema]) => schemaXml(namespace, schema as Node)),
    ),
  ]);
  return ['<?xml version="1.0" encoding="utf-8"?>', ...lines, ''].join('\n');
}
