import type { BatchCommand, BatchStep } from '../../domain/batch/batch-command';
import { withReferencesResolved } from '../../domain/batch/batch-references';
import type { Command } from '../../domain/commands/command';
import { failedDependency } from '../../domain/errors/domain-error';
import type { ReadResult } from '../../domain/results/request-result';
import { odataReadOperation } from '../../db/query/odata-read';
import { readOperation, type ReadRequest, type ReadRunner, type ReadSettings } from '../../db/query/read-operation';

/**
 * Turns the steps of a `$batch` into what runs: `$<id>` references resolved to the entities earlier
 * requests created (DESIGN §12). The API has checked that every reference names an earlier POST the
 * step waits for, so one that is missing here means that POST failed: the step is a 424.
 */

/** An entity a POST of the batch created. */
export interface Created {
  entity: string;
  dbId: number;
  encodedId: string;
}

export type CreatedByStep = ReadonlyMap<string, Created>;

function createdBy(created: CreatedByStep, stepId: string, id: string): Created {
  const entity = created.get(id);
  if (!entity) throw failedDependency(`Request '${id}' created no entity, so '${stepId}' was not run.`);
  return entity;
}

/** The command of a write step, run under `commandId` (its unit's id in the command log). */
export function commandOfStep(
  batch: Pick<BatchCommand, 'subject' | 'issuedAt' | 'origin'>,
  step: BatchStep,
  commandId: string,
  created: CreatedByStep,
): Command {
  const write = step.write!;
  const encodedId = (id: string) => createdBy(created, step.id, id).encodedId;
  const resolved = <T>(value: T, patch: boolean): T =>
    write.references ? withReferencesResolved(value, patch, encodedId) : value;
  const key = write.keyReference === undefined ? write.key : createdBy(created, step.id, write.keyReference).dbId;
  return {
    commandId,
    name: write.name,
    entity: write.entity,
    subject: batch.subject,
    issuedAt: batch.issuedAt,
    ...(batch.origin === undefined ? {} : { origin: batch.origin }),
    ...(key === undefined ? {} : { key }),
    ...(write.body === undefined ? {} : { body: resolved(write.body, false) }),
    ...(write.patch === undefined ? {} : { patch: resolved(write.patch, true) }),
    ...(write.ifMatch === undefined ? {} : { ifMatch: write.ifMatch }),
  };
}

/** The read of a GET step (`$s1` becomes the key of the entity s1 created). */
export function readOfStep(step: BatchStep, created: CreatedByStep): ReadRequest {
  const read = step.read!;
  const key = read.keyReference === undefined ? read.key : createdBy(created, step.id, read.keyReference).encodedId;
  return {
    route: read.route,
    query: read.query,
    ...(key === undefined ? {} : { key }),
    ...(read.count ? { count: true } : {}),
    ...(read.ifNoneMatch === undefined ? {} : { ifNoneMatch: read.ifNoneMatch }),
  };
}

/** A GET step read as the same request alone is read: at the root, or under `/odata` (DESIGN §17). */
export function readStep(
  run: ReadRunner,
  step: BatchStep,
  created: CreatedByStep,
  settings: ReadSettings,
): Promise<ReadResult> {
  const request = readOfStep(step, created);
  const odata = step.read!.odata;
  if (!odata) return readOperation(run, request, settings);
  return odataReadOperation(
    run,
    {
      set: request.route,
      query: request.query,
      pageSize: odata.pageSize,
      control: odata.control,
      ...(request.key === undefined ? {} : { key: request.key }),
      ...(request.count ? { count: true } : {}),
      ...(odata.navigation === undefined ? {} : { navigation: odata.navigation }),
      ...(odata.navigationKey === undefined ? {} : { navigationKey: odata.navigationKey }),
      ...(request.ifNoneMatch === undefined ? {} : { ifNoneMatch: request.ifNoneMatch }),
    },
    settings,
  );
}
