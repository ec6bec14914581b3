import type { ExecutionContext } from 'ava';
import { encodeId } from '../../domain/ids/id-codec';
import type { HttpResult, Stack } from './stack';

/** Helpers shared by the write-side test files (test/integration/writes-*.test.ts). */

export const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
export const REPRESENTATION = { prefer: 'return=representation' };

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  extensions?: { errors: string[] };
}

/** The encoded Id at the end of a `Location` header. */
export function idFromLocation(res: HttpResult): string {
  const location = res.headers.get('location') ?? '';
  return location.slice(location.lastIndexOf('/') + 1);
}

/** POSTs and returns the new entity's encoded Id, failing the test on anything but 201. */
export async function create(stack: Stack, route: string, body: unknown): Promise<string> {
  const res = await stack.request('POST', `/${route}`, { body });
  if (res.status !== 201) throw new Error(`POST /${route} answered ${res.status}: ${res.text}`);
  return idFromLocation(res);
}

export async function read<T = Record<string, unknown>>(stack: Stack, path: string): Promise<T> {
  const res = await stack.get(path);
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text}`);
  return res.body as T;
}

export function patch(stack: Stack, path: string, ops: unknown, headers: Record<string, string> = {}) {
  return stack.request('PATCH', path, { raw: JSON.stringify(ops), headers: { ...JSON_PATCH, ...headers } });
}

/** Encoded Id of a reference-data row (countries by IsoCode, lookups and markets by name). */
export async function referenceId(stack: Stack, entity: string, table: string, where: Record<string, string>) {
  const row = (await stack.knex(table).where(where).first('id')) as { id: number } | undefined;
  if (!row) throw new Error(`no ${table} row ${JSON.stringify(where)}`);
  return encodeId(entity, row.id);
}

/** Asserts a problem body of exactly the DESIGN §10 shape. */
export function assertProblem(
  t: ExecutionContext,
  res: HttpResult,
  status: number,
  title: string,
  expected: { detail?: string; errors?: string[] } = {},
): void {
  t.is(res.status, status, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  const body: Problem = { type: 'about:blank', title, status };
  if (expected.detail !== undefined) body.detail = expected.detail;
  if (expected.errors !== undefined) body.extensions = { errors: expected.errors };
  t.deepEqual(res.body, body);
}

/** Polls until `check` gives a truthy value or the deadline passes (no fixed sleeps). */
export { eventually as waitFor } from './queues';
