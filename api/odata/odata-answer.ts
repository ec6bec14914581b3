import type { ODataReadResult } from '../../db/query/odata-read';
import type { WrittenResult } from '../../domain/results/request-result';
import { etagOf } from '../../domain/writes/entity-version';
import { limitHeader, type Answer } from '../http/answer';
import type { MetadataLevel, ReturnPreference } from './odata-format';
import { keyPredicateOf } from '../../domain/odata/key-predicate';

/**
 * A read under `/odata` as OData JSON (DESIGN §17): the same result the root renders (the JSON
 * Postgres built, the count, the entity tag), in OData's envelope — `value` with
 * `@odata.context`, `@odata.count` and `@odata.nextLink` for a collection, the context URL first in
 * an entity. `odata.metadata=none` leaves out the context URL (the documents have no control
 * information then); the count and next link stay, as OData says.
 */

export interface Envelope {
  /** The absolute service root (`http://host/odata`). */
  serviceRoot: string;
  /** What follows `$metadata#`: `Schemes`, `Schemes/$entity`, `Schemes(Id,SchemeName)`. */
  context: string;
  level: MetadataLevel;
  /** The page size applied from `Prefer: odata.maxpagesize`, said back in `Preference-Applied`. */
  pageSize?: number;
}

const field = (name: string, value: unknown) => `${JSON.stringify(name)}:${JSON.stringify(value)},`;

export function odataReadAnswer(result: ODataReadResult, envelope: Envelope): Answer {
  const { serviceRoot, level } = envelope;
  const contentType = `application/json;odata.metadata=${level}`;
  const context = level === 'none' ? '' : field('@odata.context', `${serviceRoot}/$metadata#${envelope.context}`);
  switch (result.kind) {
    case 'page': {
      const headers: Record<string, string> = { 'content-type': contentType };
      if (envelope.pageSize !== undefined) headers['preference-applied'] = `odata.maxpagesize=${envelope.pageSize}`;
      const count = result.total === undefined ? '' : field('@odata.count', result.total.n);
      if (result.total) Object.assign(headers, limitHeader(result.total));
      const next =
        result.next === undefined
          ? ''
          : `,${JSON.stringify('@odata.nextLink')}:${JSON.stringify(serviceRoot + result.next)}`;
      return { status: 200, headers, body: `{${context}${count}"value":${result.json}${next}}` };
    }
    case 'count':
      return { status: 200, headers: { 'content-type': 'text/plain', ...limitHeader(result) }, body: String(result.n) };
    case 'entity':
      // Postgres built the object (`{"@odata.etag" : …, "Id" : …}`): the context URL goes first in it.
      return {
        status: 200,
        headers: { etag: result.tag, 'content-type': contentType },
        body: `{${context}${result.json.slice(1)}`,
      };
    case 'unchanged':
      return { status: 304, headers: { etag: result.tag } };
    case 'empty':
      return { status: 204, headers: {} };
  }
}

/** The absolute URL of an entity, `http://host/odata/Schemes('k')`: its Location and OData-EntityId. */
function entityUrlOf(serviceRoot: string, set: string, encodedId: string): string {
  return `${serviceRoot}/${set}${keyPredicateOf(encodedId)}`;
}

interface WrittenEnvelope {
  serviceRoot: string;
  /** The entity set written (`Schemes`). */
  set: string;
  level: MetadataLevel;
  /** What `Prefer: return=` asked, said back in `Preference-Applied` when it was honoured. */
  asked?: ReturnPreference;
}

/**
 * A successful write under `/odata` (DESIGN §17): a create answers 201 + `Location` + the entity as
 * a keyed `/odata` read shows it (`entity`, read after the commit), or 204 + `Location` +
 * `OData-EntityId` without one (`return=minimal`, or the row already gone); an update 204, or 200
 * + the entity; a delete 204. The ETag is the written version's, as at the root.
 */
export function odataWrittenAnswer(
  result: WrittenResult,
  entity: ODataReadResult | null,
  envelope: WrittenEnvelope,
): Answer {
  if (result.change === 'deleted') return { status: 204, headers: {} };
  const created = result.change === 'created';
  const url = entityUrlOf(envelope.serviceRoot, envelope.set, result.encodedId);
  if (entity?.kind === 'entity') {
    const answer = odataReadAnswer(entity, {
      serviceRoot: envelope.serviceRoot,
      context: `${envelope.set}/$entity`,
      level: envelope.level,
    });
    if (created) answer.headers.location = url;
    if (envelope.asked === 'representation') answer.headers['preference-applied'] = 'return=representation';
    return { ...answer, status: created ? 201 : 200 };
  }
  const headers: Record<string, string> = { etag: etagOf(result.version) };
  if (created) {
    headers.location = url;
    headers['odata-entityid'] = url;
  }
  if (envelope.asked === 'minimal') headers['preference-applied'] = 'return=minimal';
  return { status: 204, headers };
}
