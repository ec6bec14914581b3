import type { Request, RequestHandler, Response } from 'express';
import type { Job, Queue } from 'bullmq';
import { QUEUE, ALL_QUEUES } from '../../domain/queues/queue-contracts';
import { rebuildViewsJob } from '../../domain/queues/job-registry';
import { DomainError, badRequest, conflict, notFound, unavailable } from '../../domain/errors/domain-error';
import { callerOf } from '../auth/caller';
import { tracing } from '../../infra/tracing/tracing';
import { jobEntry } from './job-entry';
import { JOB_STATES, countJobs, isJobState, listJobs } from './job-listing';
import type { QueueRegistry } from './queue-registry';

export interface JobsRouteDeps {
  queues: QueueRegistry;
  maxTop: number;
}

export const DEFAULT_JOBS_TOP = 50;
/** Deepest position a listing reaches (`$skip + $top`): every state list is read that far. */
export const MAX_JOBS_WINDOW = 10_000;

/** Query parameters of `GET /Jobs` (anything else is a 400). */
export const JOB_LISTING_PARAMS = new Set(['queue', 'state', '$top', '$skip', '$count']);

function location(job: Job): string {
  return `/Jobs/${job.queueName}/${encodeURIComponent(String(job.id))}`;
}

function count(raw: unknown, option: string, fallback: number, max?: number): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^[0-9]+$/.test(raw))
    throw badRequest(`${option}: '${String(raw)}' is not a non-negative integer`);
  const n = Number(raw);
  if (max !== undefined && n > max) throw badRequest(`${option}: ${n} exceeds the maximum of ${max}`);
  return n;
}

/**
 * /Jobs (AdminOnly, DESIGN §7/§10): recent jobs of every queue, one job, retrying a failed job,
 * and starting a rebuild of the read models. Their policy (AdminOnly) is in the route table.
 */
export function jobsHandlers(
  deps: JobsRouteDeps,
): Record<'listJobs' | 'rebuildViews' | 'getJob' | 'retryJob', RequestHandler> {
  /**
   * A route's work, with a failure while Redis is down shown as what it is: the queues are
   * unavailable, which is not a server bug (DESIGN §6's 503). Client mistakes stay 4xx.
   */
  type Handler = (req: Request, res: Response) => Promise<void>;
  const withQueues =
    (handler: Handler): Handler =>
    async (req, res) => {
      try {
        await handler(req, res);
      } catch (err) {
        if (err instanceof DomainError || deps.queues.reachable()) throw err;
        req.log?.warn({ err: (err as Error).message }, 'job queues unreachable');
        throw unavailable('The job queues cannot be reached; try again shortly.');
      }
    };

  function queueOf(name: string): Queue {
    const queue = deps.queues.get(name);
    if (!queue) throw notFound(`Queue '${name}' does not exist (queues: ${ALL_QUEUES.join(', ')}).`);
    return queue;
  }

  async function jobOf(queueName: string, id: string): Promise<Job> {
    const job = await queueOf(queueName).getJob(id);
    if (!job) throw notFound(`Job '${id}' of queue '${queueName}' does not exist.`);
    return job;
  }

  const list = withQueues(async (req: Request, res: Response) => {
    const query = req.query as Record<string, unknown>;
    const unknown = Object.keys(query).find((name) => !JOB_LISTING_PARAMS.has(name));
    if (unknown) throw badRequest(`unknown query parameter '${unknown}' (use queue, state, $top, $skip, $count)`);
    const { queue, state } = query;
    if (queue !== undefined && (typeof queue !== 'string' || !deps.queues.get(queue))) {
      throw badRequest(`queue: must be one of ${ALL_QUEUES.join(', ')}`);
    }
    if (state !== undefined && (typeof state !== 'string' || !isJobState(state))) {
      throw badRequest(`state: must be one of ${JOB_STATES.join(', ')}`);
    }
    if (query.$count !== undefined && query.$count !== 'true' && query.$count !== 'false') {
      throw badRequest(`$count: expected true or false, found '${String(query.$count)}'`);
    }
    const top = count(query.$top, '$top', DEFAULT_JOBS_TOP, deps.maxTop);
    const skip = count(query.$skip, '$skip', 0);
    if (skip + top > MAX_JOBS_WINDOW) throw badRequest(`$skip + $top must not exceed ${MAX_JOBS_WINDOW}`);
    const listing = {
      queues: queue ? [queueOf(queue as string)] : deps.queues.all(),
      states: state ? [state as (typeof JOB_STATES)[number]] : JOB_STATES,
      top,
      skip,
    };
    const [entries, total] = await Promise.all([
      listJobs(listing),
      query.$count === 'true' ? countJobs(listing) : Promise.resolve(undefined),
    ]);
    if (total !== undefined) res.setHeader('X-Total-Count', String(total));
    res.json(entries);
  });

  const rebuildViews = withQueues(async (req: Request, res: Response) => {
    // Its worker's log lines name this request; with tracing on its span joins the request's trace.
    const rebuild = rebuildViewsJob(callerOf(req).subject, { requestId: req.id, ...tracing().activeContext() });
    const job = await queueOf(QUEUE.views).add(rebuild.name, rebuild.data, rebuild.opts);
    res
      .status(202)
      .location(location(job))
      .json(jobEntry(job, await job.getState()));
  });

  const getJob = withQueues(async (req: Request, res: Response) => {
    const [queue, id] = [req.params.queue as string, req.params.id as string];
    const job = await jobOf(queue, id);
    const state = await job.getState();
    // Its fields were read before its state: a job that finished in between is read again, so a
    // finished job shows its final attempts and reason (a failed job once showed one attempt short).
    const final = state === 'completed' || state === 'failed' ? await jobOf(queue, id) : job;
    res.json(jobEntry(final, state));
  });

  const retryJob = withQueues(async (req: Request, res: Response) => {
    const job = await jobOf(req.params.queue as string, req.params.id as string);
    const state = await job.getState();
    if (state !== 'failed')
      throw conflict([`Job '${job.id}' of queue '${job.queueName}' is ${state}: only failed jobs can be retried`]);
    try {
      await job.retry('failed');
    } catch (err) {
      // Another caller retried it first, or it was removed, between the check and the retry.
      throw conflict([`Job '${job.id}' of queue '${job.queueName}' could not be retried: ${(err as Error).message}`]);
    }
    const retried = await jobOf(job.queueName, String(job.id));
    res
      .status(202)
      .location(location(retried))
      .json(jobEntry(retried, await retried.getState()));
  });

  return { listJobs: list, rebuildViews, getJob, retryJob };
}
