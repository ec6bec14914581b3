/**
 * The OASIS vocabularies `$metadata` uses, and the annotation values that need more than JSON to
 * be written as XML (an enum member, a path): the one model of csdl-model.ts is rendered as CSDL
 * JSON and as CSDL XML, and these say which XML expression a value is.
 */

export const VOCABULARIES = [
  { alias: 'Core', namespace: 'Org.OData.Core.V1' },
  { alias: 'Capabilities', namespace: 'Org.OData.Capabilities.V1' },
  { alias: 'Validation', namespace: 'Org.OData.Validation.V1' },
] as const;

/** Where a vocabulary is published, in the format of the document that references it. */
export const vocabularyUri = (namespace: string, format: 'xml' | 'json'): string =>
  `https://oasis-tcs.github.io/odata-vocabularies/vocabularies/${namespace}.${format}`;

/** A value of an enumeration (flags: several members), e.g. `Capabilities.HttpMethod/PATCH`. */
export class EnumValue {
  constructor(
    readonly enumType: string,
    readonly members: readonly string[],
  ) {}
}

/** A property or navigation property path (`Edm.PropertyPath`, `Edm.NavigationPropertyPath`). */
export class PathValue {
  constructor(
    readonly kind: 'PropertyPath' | 'NavigationPropertyPath',
    readonly path: string,
  ) {}
}

export type AnnotationValue =
  | boolean
  | number
  | string
  | EnumValue
  | PathValue
  | readonly AnnotationValue[]
  | { readonly [property: string]: AnnotationValue };
