import { tooLarge, validationFailed } from '../errors/domain-error';
import { referencedId, referencesIn } from './batch-references';

/**
 * The OData 4.01 JSON batch format of `POST /$batch` (DESIGN §12), checked as a whole before
 * anything runs: a body that is not a valid batch is one 400 listing every problem.
 */

export interface BatchRequest {
  /** Position in the batch. */
  index: number;
  id: string;
  /** Upper-cased. */
  method: string;
  url: string;
  atomicityGroup?: string;
  /** Ids of the earlier requests this one waits for (a named group stands for its requests). */
  dependsOn: string[];
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The JSON body; undefined when the request has none. */
  body: unknown;
  /** The request whose created entity the URL names (`$s1`), if it does. */
  urlReference?: string;
  /** Whether the body holds `$<id>` references (set by the batch checks). */
  bodyReferences?: boolean;
}

export interface BatchLimits {
  /** BATCH_MAX_REQUESTS. */
  maxRequests: number;
}

/** Longest request id, group name and URL, so no answer echoes megabytes back. */
const MAX_NAME_LENGTH = 200;
const MAX_URL_LENGTH = 8192;
const MAX_HEADERS = 20;
/** Enough to show a client what is wrong without building an answer as large as its body. */
const MAX_ERRORS = 20;

const REQUEST_MEMBERS = new Set(['id', 'method', 'url', 'atomicityGroup', 'dependsOn', 'headers', 'body']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_NAME_LENGTH;
}

/**
 * The request id a URL names (`$s1`, `$s1?$expand=Address`), if any. Only a URL starting with `$`
 * is a reference: `/$batch` is a path (which a batch does not serve).
 */
export function urlReferenceOf(url: string): string | undefined {
  return referencedId(url.split('?')[0]!);
}

/** The requests of a raw batch body, or a 400 (413 past BATCH_MAX_REQUESTS) naming every problem. */
export function parseBatch(raw: unknown, limits: BatchLimits): BatchRequest[] {
  if (!isRecord(raw)) throw validationFailed(['$batch: the body must be a JSON object with a `requests` array']);
  const list = raw.requests;
  if (!Array.isArray(list)) throw validationFailed(['$batch.requests: must be an array of requests']);
  if (list.length > limits.maxRequests) {
    throw tooLarge(
      `The batch holds ${list.length} requests; at most ${limits.maxRequests} are allowed (BATCH_MAX_REQUESTS). Split it into several batches.`,
    );
  }
  const errors: string[] = [];
  const fail = (message: string) => {
    if (errors.length < MAX_ERRORS) errors.push(message);
  };
  const requests: BatchRequest[] = [];
  list.forEach((item: unknown, index) => {
    const request = requestOf(item, index, fail);
    if (request) requests.push(request);
  });
  // The rules between requests are checked over those well-formed, so every problem is listed.
  checkOrder(requests, fail);
  if (errors.length) throw validationFailed(errors);
  return requests;
}

function requestOf(item: unknown, index: number, fail: (message: string) => void): BatchRequest | undefined {
  const at = `$batch.requests[${index}]`;
  if (!isRecord(item)) {
    fail(`${at}: must be an object`);
    return undefined;
  }
  const before = { failed: false };
  const problem = (message: string) => {
    before.failed = true;
    fail(`${at}${message}`);
  };
  for (const member of Object.keys(item)) {
    if (!REQUEST_MEMBERS.has(member)) problem(`: unknown member '${member.slice(0, MAX_NAME_LENGTH)}'`);
  }
  if (!isName(item.id)) problem(`.id: must be a string of 1 to ${MAX_NAME_LENGTH} characters`);
  if (typeof item.method !== 'string' || item.method.length === 0 || item.method.length > 20)
    problem('.method: must be an HTTP method name');
  if (typeof item.url !== 'string' || item.url.length > MAX_URL_LENGTH)
    problem(`.url: must be a string of at most ${MAX_URL_LENGTH} characters`);
  if (item.atomicityGroup !== undefined && !isName(item.atomicityGroup))
    problem(`.atomicityGroup: must be a string of 1 to ${MAX_NAME_LENGTH} characters`);
  const dependsOn = item.dependsOn ?? [];
  if (!Array.isArray(dependsOn) || !dependsOn.every(isName) || dependsOn.length > MAX_HEADERS * 5)
    problem('.dependsOn: must be an array of request ids or group names');
  const headers = headersOf(item.headers, problem);
  if (before.failed) return undefined;
  const url = item.url as string;
  return {
    index,
    id: item.id as string,
    method: (item.method as string).toUpperCase(),
    url,
    ...(item.atomicityGroup === undefined ? {} : { atomicityGroup: item.atomicityGroup as string }),
    dependsOn: [...new Set(dependsOn as string[])],
    headers: headers ?? {},
    body: item.body,
    ...(urlReferenceOf(url) === undefined ? {} : { urlReference: urlReferenceOf(url) }),
  };
}

function headersOf(raw: unknown, problem: (message: string) => void): Record<string, string> | undefined {
  if (raw === undefined) return {};
  const entries = isRecord(raw) ? Object.entries(raw) : [];
  if (!isRecord(raw) || entries.length > MAX_HEADERS || !entries.every(([, v]) => typeof v === 'string')) {
    problem(`.headers: must be an object of at most ${MAX_HEADERS} string values`);
    return undefined;
  }
  return Object.fromEntries(entries.map(([name, value]) => [name.toLowerCase(), value as string]));
}

/** Whether `target` is named in a dependsOn: itself, or the group it belongs to. */
function named(waitsFor: ReadonlySet<string>, target: BatchRequest): boolean {
  return waitsFor.has(target.id) || (target.atomicityGroup !== undefined && waitsFor.has(target.atomicityGroup));
}

/**
 * The rules between requests: unique ids, contiguous groups, group names that are not request ids,
 * `dependsOn` naming only earlier requests or groups, and references to an earlier POST that is in
 * the same group or named (itself or its group) in `dependsOn`.
 */
function checkOrder(requests: BatchRequest[], fail: (message: string) => void): void {
  const byId = new Map<string, BatchRequest>();
  const groups = new Map<string, BatchRequest[]>();
  let previousGroup: string | undefined;
  for (const request of requests) {
    const at = `$batch.requests[${request.index}]`;
    if (byId.has(request.id)) fail(`${at}.id: '${request.id}' is used by an earlier request`);
    const group = request.atomicityGroup;
    if (group !== undefined && group !== previousGroup && groups.has(group))
      fail(`${at}.atomicityGroup: the requests of group '${group}' must be next to each other`);
    previousGroup = group;

    // What this request may wait for or refer to: earlier requests, and groups already closed. A
    // group stays one name (the worker knows which groups failed): expanded into its members, n
    // requests naming a group of n made n² ids.
    for (const name of request.dependsOn) {
      if (!byId.has(name) && !(groups.has(name) && name !== group))
        fail(`${at}.dependsOn: '${name}' is not an earlier request or group`);
    }
    const waitsFor = new Set(request.dependsOn);

    const inBody = referencesIn(request.body, request.method === 'PATCH');
    if (inBody.length) request.bodyReferences = true;
    const references = [...(request.urlReference === undefined ? [] : [request.urlReference]), ...inBody];
    for (const id of references) {
      const target = byId.get(id);
      if (!target) fail(`${at}: '$${id}' does not name an earlier request`);
      else if (target.method !== 'POST') fail(`${at}: '$${id}' names a ${target.method}, which creates no entity`);
      else if (!((group !== undefined && target.atomicityGroup === group) || named(waitsFor, target)))
        fail(`${at}: '$${id}' must be in the same atomicity group or named (itself or its group) in dependsOn`);
    }

    if (!byId.has(request.id)) byId.set(request.id, request);
    if (group !== undefined) {
      if (!groups.has(group)) groups.set(group, []);
      groups.get(group)!.push(request);
    }
  }
  for (const name of groups.keys()) {
    const clash = byId.get(name);
    if (clash) fail(`$batch.requests[${clash.index}].id: '${name}' is also the name of an atomicity group`);
  }
}
