import type { EntityDefinition } from '../../domain/entities';
import { parseReadOptions, type ReadOptions } from '../../domain/queries/read-options';
import type { ReadLimits } from '../../domain/queries/read-limits';
import { listStatements, type CountStatement, type ReadBudget, type Statement } from './entity-reader';
import { planRead } from './read-plan';

/**
 * The parsed options and compiled statements of the list reads seen lately, by route and query.
 * Parsing, planning and compiling a list read costs ~20 µs in a tight loop but ~0.25 ms of CPU in
 * the flow of requests, where each starts with cold caches (the benchmark's list with a nested
 * `$expand`, bench/README.md): a client that repeats a query (a dashboard, a page polled) pays it
 * once. What a read is compiled to depends only on its route, its query and the read settings,
 * never on the time or the data, so a kept plan is the plan the query would get again. Client
 * values are bound parameters of the kept statements, and nothing changes a kept plan (frozen).
 */

/** Plans kept per read settings (one set per process); past it the least recently used goes. */
const PLANS_KEPT = 256;
/** A query longer than this (route and query as JSON) is compiled each time, not kept. */
const KEY_CHARS = 2048;

/** What the reads' settings fix about a plan: the limits and the response budget. */
export interface PlanSettings {
  limits: ReadLimits;
  budget: ReadBudget;
}

export interface ListPlan {
  options: Readonly<ReadOptions>;
  page: Statement;
  /** The `$count` statement, when the query asks for one. */
  count?: CountStatement;
}

/** Insertion order is recency order: a hit is deleted and set again. */
const plansBySettings = new WeakMap<PlanSettings, Map<string, ListPlan>>();

function frozen(plan: ListPlan): ListPlan {
  Object.freeze(plan.page.params);
  if (plan.count) Object.freeze(plan.count.params);
  Object.freeze(plan.options);
  return Object.freeze(plan);
}

/**
 * The plan of a list read of `entity` at `route` with `query`: kept, or parsed, planned and
 * compiled now (a query that does not parse or plan throws its 400 each time and is not kept).
 */
export function listPlanOf(
  entity: EntityDefinition,
  route: string,
  query: Record<string, unknown>,
  settings: PlanSettings,
): ListPlan {
  const key = `${route}?${JSON.stringify(query)}`;
  let plans = plansBySettings.get(settings);
  if (!plans) plansBySettings.set(settings, (plans = new Map()));
  const kept = plans.get(key);
  if (kept) {
    plans.delete(key);
    plans.set(key, kept);
    return kept;
  }
  const options = parseReadOptions(query, settings.limits);
  const { page, count } = listStatements(
    planRead(entity, options),
    settings.budget,
    options.count ? settings.limits : undefined,
  );
  const plan = frozen({ options, page, ...(count ? { count } : {}) });
  if (key.length <= KEY_CHARS) {
    if (plans.size >= PLANS_KEPT) plans.delete(plans.keys().next().value!);
    plans.set(key, plan);
  }
  return plan;
}
