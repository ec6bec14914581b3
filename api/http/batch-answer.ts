import {
  batchEntriesOf,
  type BatchEntry,
  type LegacyRecordedBatch,
  type RecordedBatch,
} from '../../domain/batch/batch-command';
import { parseJsonInSlices } from './json-in-slices';
import { answerOf, JSON_TYPE, PROBLEM_TYPE, type Answer } from './answer';

/**
 * The `$batch` response body (OData 4.01 JSON batch, DESIGN §12), rendered by the API from the
 * results a command worker recorded, each with the function that renders the same request alone
 * (answer.ts). Bodies are built as text: JSON bodies are JSON already, built by Postgres, and are
 * embedded, not parsed again.
 */

function isJson(answer: Answer): boolean {
  const type = answer.headers['content-type'];
  return type === JSON_TYPE || type === PROBLEM_TYPE;
}

function entryText(id: string, answer: Answer): string {
  const body = answer.body === undefined ? '' : `,"body":${isJson(answer) ? answer.body : JSON.stringify(answer.body)}`;
  return `{"id":${JSON.stringify(id)},"status":${answer.status},"headers":${JSON.stringify(answer.headers)}${body}}`;
}

/**
 * The response of a finished batch as its worker recorded it. A record of a release before results
 * were recorded (a rolling deploy, an Idempotency-Key repeat within the log's retention) holds the
 * response text itself, which is sent as it is.
 */
export function batchResponseText(recorded: RecordedBatch | LegacyRecordedBatch): string {
  if ('responses' in recorded) return recorded.responses;
  const entries = batchEntriesOf(recorded);
  const parts = entries.map(({ id, result }) => entryText(id, answerOf(result, recorded.walPosition)));
  return `{"responses":[${parts.join(',')}]}`;
}

/**
 * batchResponseText for the answer of a batch that just finished: its results (up to
 * MAX_RESPONSE_BYTES) parsed and rendered a slice at a time, `pause` giving other callers a turn.
 */
export async function batchResponseTextInSlices(
  recorded: RecordedBatch | LegacyRecordedBatch,
  pause: () => Promise<void>,
): Promise<string> {
  if ('responses' in recorded) return recorded.responses;
  const entries = (await parseJsonInSlices(recorded.results, pause)) as BatchEntry[];
  const parts: string[] = [];
  for (const { id, result } of entries) {
    parts.push(entryText(id, answerOf(result, recorded.walPosition)));
    await pause();
  }
  return `{"responses":[${parts.join(',')}]}`;
}
