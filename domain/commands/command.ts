import type { Failure } from '../errors/domain-error';
import type { WriteOrigin } from './write-origin';

/**
 * The queue contract of the `commands` queue: what the API sends and what a command worker answers.
 * Job name = command name; job id = command id (so a repeat add of one command is one job).
 */

export const COMMAND_NAMES = ['create', 'replace', 'patch', 'delete'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** One RFC 6902 operation as received (shape-checked by the API before it is queued). */
export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

export interface Command {
  commandId: string;
  name: CommandName;
  /** Entity type name (`Scheme`). */
  entity: string;
  /** Primary key of the target row (replace, patch, delete). */
  key?: number;
  /** POST/PUT body, already shape-validated, read-only members removed. */
  body?: Record<string, unknown>;
  patch?: PatchOperation[];
  /** `If-Match` header value, checked against the row version under lock. */
  ifMatch?: string;
  /** Acting subject (token `sub`), carried into events and the activity log. */
  subject: string;
  /** Hash of the request for Idempotency-Key replays: the same key with another body is a conflict. */
  requestHash?: string;
  issuedAt: string;
  /** The request that made it: its id and trace context (write-origin.ts). */
  origin?: WriteOrigin;
  /** The API process waiting for the reply (its route, infra/command-replies.ts); absent: every process hears it. */
  replyTo?: string;
}

/** What a write request comes to before its sender gives it an id, a subject and a time (api/entities/write-command.ts). */
export type CommandFields = Pick<Command, 'name' | 'entity' | 'key' | 'body' | 'patch' | 'ifMatch'>;

export type CommandResult =
  | { ok: true; entity: string; dbId: number; encodedId: string; version: number; deleted?: boolean }
  | { ok: false; failure: Failure };
