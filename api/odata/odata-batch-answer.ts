import { entityByName } from '../../domain/entities';
import type { RequestResult, WrittenResult } from '../../domain/results/request-result';
import { etagOf } from '../../domain/writes/entity-version';
import { odataFailureAnswer, readAnswer, type Answer } from '../http/answer';
import { CONSISTENCY_TOKEN_HEADER, tokenOfLsn } from '../http/consistency';
import type { AnsweredStep } from '../batch/batch.routes';
import { odataReadAnswer } from './odata-answer';

/**
 * The answer of one request of `/odata/$batch` (DESIGN §17), rendered from its recorded result as
 * the same request alone is answered under `/odata`: reads in the OData envelope (odata-answer.ts),
 * failures as OData errors, writes with absolute `Location`/`OData-EntityId` and the entity's
 * context URL.
 */

const keyPredicate = (id: string) => `('${id.replace(/'/g, "''")}')`;

function odataWrittenAnswer(result: WrittenResult, serviceRoot: string): Answer {
  if (result.change === 'deleted') return { status: 204, headers: {} };
  const set = entityByName(result.entity).route;
  const id = `${serviceRoot}/${set}${keyPredicate(result.encodedId)}`;
  const created = result.change === 'created';
  const { representation } = result;
  const headers: Record<string, string> = { etag: etagOf(representation?.version ?? result.version) };
  if (created) headers.location = id;
  if (!representation) return { status: 204, headers: { ...headers, 'odata-entityid': id } };
  headers['content-type'] = 'application/json;odata.metadata=minimal';
  const context = `"@odata.context":${JSON.stringify(`${serviceRoot}/$metadata#${set}/$entity`)}`;
  const json = representation.json;
  const body = json === '{}' ? `{${context}}` : `{${context},${json.slice(1)}`;
  return { status: created ? 201 : 200, headers, body };
}

export function odataStepAnswer(
  result: RequestResult,
  step: AnsweredStep | undefined,
  serviceRoot: string,
  walPosition?: string,
): Answer {
  if (result.kind === 'failed') return odataFailureAnswer(result.failure);
  if (result.kind === 'written') {
    const answer = odataWrittenAnswer(result, serviceRoot);
    if (walPosition !== undefined) answer.headers[CONSISTENCY_TOKEN_HEADER] = tokenOfLsn(walPosition);
    return answer;
  }
  const read = step?.read;
  const odata = read?.odata;
  if (!read || !odata) return readAnswer(result);
  const keyed = read.key !== undefined || read.keyReference !== undefined;
  const single = keyed && (odata.navigation === undefined || result.kind === 'entity');
  return odataReadAnswer(result, {
    serviceRoot,
    context: `${odata.contextSet}${single ? '/$entity' : ''}`,
    level: odata.level,
    ...(odata.pageSizeApplied ? { pageSize: odata.pageSize } : {}),
  });
}
