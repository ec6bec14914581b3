import { csdlJson } from '../../api/odata/metadata/csdl-json';

/**
 * A CSDL JSON document (OData CSDL JSON, as `/odata/$metadata?$format=json` serves it) read for the
 * contract check: its structured types, their members and the container's sets. Nothing here
 * knows our entity definitions; the check judges answers by what the document says.
 */

type Json = Record<string, unknown>;

export interface Member {
  kind: 'Property' | 'NavigationProperty';
  /** Qualified (`EntityManagement.Address`) or an Edm primitive (`Edm.String`). */
  type: string;
  collection: boolean;
  /** CSDL JSON: an absent `$Nullable` means false. */
  nullable: boolean;
  maxLength?: number;
}

export interface StructuredType {
  name: string;
  kind: 'EntityType' | 'ComplexType';
  key: readonly string[];
  members: ReadonlyMap<string, Member>;
}

export interface ODataModel {
  namespace: string;
  types: ReadonlyMap<string, StructuredType>;
  /** Entity set name → its entity type (unqualified). */
  sets: ReadonlyMap<string, string>;
}

export function odataModelOf(document: Json): ODataModel {
  const container = document.$EntityContainer;
  if (typeof container !== 'string') throw new Error('CSDL JSON without $EntityContainer');
  const namespace = container.slice(0, container.lastIndexOf('.'));
  const schema = document[namespace] as Json | undefined;
  if (!schema) throw new Error(`CSDL JSON without the schema ${namespace}`);
  const types = new Map<string, StructuredType>();
  const sets = new Map<string, string>();
  for (const [name, element] of Object.entries(schema)) {
    if (name.startsWith('$') || name.startsWith('@')) continue;
    const el = element as Json;
    if (el.$Kind === 'EntityType' || el.$Kind === 'ComplexType') {
      const members = new Map<string, Member>();
      for (const [memberName, raw] of Object.entries(el)) {
        if (memberName.startsWith('$') || memberName.includes('@')) continue;
        const m = raw as Json;
        members.set(memberName, {
          kind: m.$Kind === 'NavigationProperty' ? 'NavigationProperty' : 'Property',
          type: (m.$Type as string | undefined) ?? 'Edm.String',
          collection: m.$Collection === true,
          nullable: m.$Nullable === true,
          ...(typeof m.$MaxLength === 'number' ? { maxLength: m.$MaxLength } : {}),
        });
      }
      const key = ((el.$Key as unknown[] | undefined) ?? []).filter((k): k is string => typeof k === 'string');
      types.set(name, { name, kind: el.$Kind, key, members });
    }
  }
  const entities = schema[container.slice(namespace.length + 1)] as Json;
  for (const [name, entry] of Object.entries(entities)) {
    const type = (entry as Json).$Type;
    if (!name.startsWith('$') && typeof type === 'string' && (entry as Json).$Collection === true)
      sets.set(name, type.slice(namespace.length + 1));
  }
  return { namespace, types, sets };
}

/** The model `csdlJson` generates: what `$metadata` serves (the settings change annotations only). */
export const GENERATED_MODEL = odataModelOf(csdlJson({ maxTop: 1000, maxExpandDepth: 3 }));

const served = new Map<string, Promise<ODataModel>>();
// The fetch of this process as loaded: a test may replace the global one by a checking one, which needs this model.
const send = globalThis.fetch;

/** The model a running service serves at `<baseUrl>/odata/$metadata?$format=json`, fetched once per service. */
export function servedODataModel(baseUrl: string): Promise<ODataModel> {
  let model = served.get(baseUrl);
  if (!model) {
    model = (async () => {
      const res = await send(`${baseUrl}/odata/$metadata?$format=json`);
      if (res.status !== 200) throw new Error(`$metadata?$format=json answered ${res.status}`);
      return odataModelOf((await res.json()) as Json);
    })();
    // A failed fetch is not kept: the next answer tries again.
    model.catch(() => served.delete(baseUrl));
    served.set(baseUrl, model);
  }
  return model;
}
