import type { CommandFields } from '../commands/command';
import type { Failure } from '../errors/domain-error';
import type { RequestResult } from '../results/request-result';
import type { WriteOrigin } from '../commands/write-origin';

/**
 * The queue contract of a `$batch` (DESIGN §12): the API checks every request (shape, route, media
 * type, policy, references) and sends the batch as one `batch` job on the `commands` queue; a command
 * worker runs its units in order — an atomicity group as one command in one transaction, a request
 * outside groups as its own command, a GET on Postgres — and records every request's result, from
 * which the API renders the response.
 */

type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A GET, by route, or by the entity an earlier POST of the batch created (`$s1`). */
export interface BatchRead {
  route: string;
  key?: string;
  /** The request whose created entity is the key (`url: "$s1"`); `route` is that entity's route. */
  keyReference?: string;
  /** `/$count`: of the set, or under `/odata` of the navigation collection (or complex property) named. */
  count?: true;
  query: Record<string, unknown>;
  ifNoneMatch?: string;
  /** A read under `/odata` (DESIGN §17): read as db/query/odata-read.ts reads it, answered in OData JSON. */
  odata?: BatchODataRead;
}

/** What an `/odata` read asks beyond the root's (api/odata/odata-read.routes.ts) and how its answer is framed. */
export interface BatchODataRead {
  /** A navigation property of the keyed entity (`Schemes('k')/Developments`). */
  navigation?: string;
  /** The key of one member of that navigation collection (`Developments('d')`). */
  navigationKey?: string;
  /** `Prefer: odata.maxpagesize` (at most MAX_TOP), or the default page size. */
  pageSize: number;
  /** Whether `Preference-Applied` says the page size back. */
  pageSizeApplied: boolean;
  /** The control information the documents carry (db/query/read-plan.ts ODataControl). */
  control: { etag: boolean; full?: { serviceRoot: string; namespace: string } };
  /** The answer's envelope: the metadata level, and the context URL's set and selection. */
  level: 'minimal' | 'none' | 'full';
  contextSet: string;
}

/**
 * A write: the command the same request alone becomes (api/entities/write-command.ts), `$<id>`
 * references still in it.
 */
export interface BatchWrite extends CommandFields {
  /** The request whose created entity is the key (`url: "$s1"`), resolved to its key by the worker. */
  keyReference?: string;
  /** `Prefer: return=representation`. */
  representation: boolean;
  /** The body or operations hold `$<id>` references to resolve (most bodies hold none). */
  references?: true;
  /**
   * A write under `/odata` (DESIGN §17): its representation is the entity as an `/odata` keyed read
   * shows it, answered at the metadata level asked, with `Preference-Applied` for an explicit `return=`.
   */
  odata?: { control: BatchODataRead['control']; level: BatchODataRead['level']; asked?: 'minimal' | 'representation' };
}

export interface BatchStep {
  id: string;
  method: WriteMethod | 'GET';
  atomicityGroup?: string;
  /** Earlier requests that must have succeeded: their ids, or the name of their atomicity group. */
  dependsOn: string[];
  /** Answered without running: the request failed its checks in the API. */
  failure?: Failure;
  read?: BatchRead;
  write?: BatchWrite;
}

export interface BatchCommand {
  commandId: string;
  name: 'batch';
  subject: string;
  issuedAt: string;
  /** The batch's Idempotency-Key fingerprint: a key reused for another batch is a conflict. */
  requestHash?: string;
  /** The request that made it: its id and trace context, given to each of its commands. */
  origin?: WriteOrigin;
  /** The API reads from replicas: successful write answers carry X-Consistency-Token (DESIGN §14). */
  consistencyTokens?: true;
  /** The API process waiting for the reply (its route, infra/command-replies.ts); absent: every process hears it. */
  replyTo?: string;
  steps: BatchStep[];
}

/**
 * What a batch job answers. The results themselves are recorded in the command log, not in the
 * job: the queue's event stream would otherwise carry, and keep, every batch response.
 */
export interface BatchResult {
  ok: true;
  batch: true;
}

/** One request of a finished batch: its id and what it came to (JSON bodies kept as text, exactly as built). */
export interface BatchEntry {
  id: string;
  result: RequestResult;
}

/**
 * A finished batch as the command log keeps it (for the API, `/Commands/<id>` and repeats): each
 * request's result in request order, which the API renders (api/http/batch-answer.ts). The entries
 * are kept as JSON text in a jsonb string: jsonb values cannot hold U+0000 or a lone surrogate,
 * which a request id or a message echoing a request may carry (recordedBatch, batchEntriesOf).
 */
export interface RecordedBatch extends BatchResult {
  /** `BatchEntry[]` as JSON text. */
  results: string;
  /**
   * The primary's WAL position (`pg_lsn` text) read after the batch's last unit, when the batch
   * asked for consistency tokens: at or past every write of the batch.
   */
  walPosition?: string;
}

/**
 * A finished batch as releases before issue 25 recorded it: the rendered response text. Still
 * read (answered as it is) until the command log's retention has aged the last one out.
 */
export interface LegacyRecordedBatch extends BatchResult {
  responses: string;
}

export function recordedBatch(entries: readonly BatchEntry[], walPosition?: string): RecordedBatch {
  return { ok: true, batch: true, results: JSON.stringify(entries), ...(walPosition ? { walPosition } : {}) };
}

export function batchEntriesOf(recorded: RecordedBatch): BatchEntry[] {
  return JSON.parse(recorded.results) as BatchEntry[];
}

export function isBatchResult(result: unknown): result is BatchResult {
  return (result as BatchResult | null)?.batch === true;
}
