import { entityByName } from '../../domain/entities';
import type { RequestResult } from '../../domain/results/request-result';
import { etagOf } from '../../domain/writes/entity-version';
import { odataFailureAnswer, readAnswer, type Answer } from '../http/answer';
import { CONSISTENCY_TOKEN_HEADER, tokenOfLsn } from '../http/consistency';
import type { AnsweredStep } from '../batch/batch.routes';
import { odataReadAnswer, odataWrittenAnswer } from './odata-answer';

/**
 * The answer of one request of `/odata/$batch` (DESIGN §17), rendered from its recorded result as
 * the same request alone is answered under `/odata`: reads in the OData envelope (odata-answer.ts),
 * failures as OData errors, writes as odataWrittenAnswer answers a lone one (the entity, when
 * there is one, read in the batch's transaction as an `/odata` keyed read shows it).
 */

export function odataStepAnswer(
  result: RequestResult,
  step: AnsweredStep | undefined,
  serviceRoot: string,
  walPosition?: string,
): Answer {
  if (result.kind === 'failed') return odataFailureAnswer(result.failure);
  if (result.kind === 'written') {
    const odata = step?.write?.odata;
    const { representation } = result;
    const entity = representation
      ? { kind: 'entity' as const, json: representation.json, tag: etagOf(representation.version) }
      : null;
    const answer = odataWrittenAnswer(result, entity, {
      serviceRoot,
      set: entityByName(result.entity).route,
      level: odata?.level ?? 'minimal',
      ...(odata?.asked === undefined ? {} : { asked: odata.asked }),
    });
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
