import type { EntityDefinition, OwnedRecordDefinition } from './entity-definition';
import { BuildingType, Country, DevelopmentStatus, DevelopmentType, Market } from './reference-data.entities';
import { Address, Company } from './party.entities';
import { Development, ExternalLink, Note, Scheme, SchemeCompany, SchemeMarketBoundary, Tag } from './scheme.entities';
import { InvestmentCompany, InvestmentEvent, OccupierEvent, Portfolio } from './event.entities';

export * from './entity-definition';
export { Activity, READ_MODELS } from './read-models';
import { READ_MODELS } from './read-models';

/** Every entity with a route, in the order docs and exports list them. */
export const ENTITIES: readonly EntityDefinition[] = [
  Scheme,
  Address,
  Company,
  BuildingType,
  Development,
  DevelopmentType,
  DevelopmentStatus,
  Market,
  Country,
  InvestmentEvent,
  OccupierEvent,
  Portfolio,
  SchemeMarketBoundary,
  SchemeCompany,
  InvestmentCompany,
];

export const OWNED_RECORDS: readonly OwnedRecordDefinition[] = [Note, Tag, ExternalLink];

const byName = new Map([...ENTITIES, ...READ_MODELS].map((e) => [e.name, e]));
const ownedByName = new Map(OWNED_RECORDS.map((r) => [r.name, r]));

export function entityByName(name: string): EntityDefinition {
  const entity = byName.get(name);
  if (!entity) throw new Error(`unknown entity type ${name}`);
  return entity;
}

const readableByRouteMap = new Map([...ENTITIES, ...READ_MODELS].map((e) => [e.route, e]));

/** Entities and read models: everything a GET may name. */
export function readableByRoute(route: string): EntityDefinition | undefined {
  return readableByRouteMap.get(route);
}

export function ownedRecordByName(name: string): OwnedRecordDefinition | undefined {
  return ownedByName.get(name);
}

/** Relations of other entities that point at `target`: used to name referrers on delete. */
export function referrersOf(target: string): { entity: EntityDefinition; relation: string; column: string }[] {
  const out: { entity: EntityDefinition; relation: string; column: string }[] = [];
  for (const entity of ENTITIES) {
    for (const [relation, def] of Object.entries(entity.relations)) {
      if (def.target === target) out.push({ entity, relation, column: def.column });
    }
  }
  return out;
}

export { Address, Company, Scheme, SchemeCompany, SchemeMarketBoundary, Development };
export { BuildingType, Country, DevelopmentStatus, DevelopmentType, Market };
export { InvestmentCompany, InvestmentEvent, OccupierEvent, Portfolio };
export { Note, Tag, ExternalLink };
