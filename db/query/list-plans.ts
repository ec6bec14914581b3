import type { EntityDefinition } from '../../domain/entities';
import { parseReadOptions, type ReadOptions } from '../../domain/queries/read-options';
import type { ReadLimits } from '../../domain/queries/read-limits';
import { listStatements, type PageStatements, type ReadBudget } from './entity-reader';
import { planRead, type ReadPlan } from './read-plan';

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
/** Nor is a plan whose page statement is longer than this: kept plans stay within ~16 MB. */
const SQL_CHARS = 64 * 1024;

/** What the reads' settings fix about a plan: the limits and the response budget. */
export interface PlanSettings {
  limits: ReadLimits;
  budget: ReadBudget;
}

export interface ListPlan extends PageStatements {
  /** The options the page was planned with. */
  options: Readonly<ReadOptions>;
  /** Under `/odata`: the `$top` asked for, which limits the whole result (absent: no `$top`). */
  wholeTop?: number;
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
 * The plan kept under `key` (everything the plan depends on besides the settings), or the one
 * `compile` makes now, then kept. A `compile` that throws (a query's 400) keeps nothing.
 */
export function keptPlan(settings: PlanSettings, key: string, compile: () => ListPlan): ListPlan {
  let plans = plansBySettings.get(settings);
  if (!plans) plansBySettings.set(settings, (plans = new Map()));
  const kept = plans.get(key);
  if (kept) {
    plans.delete(key);
    plans.set(key, kept);
    return kept;
  }
  const plan = frozen(compile());
  if (key.length <= KEY_CHARS && plan.page.sql.length <= SQL_CHARS) {
    if (plans.size >= PLANS_KEPT) plans.delete(plans.keys().next().value!);
    plans.set(key, plan);
  }
  return plan;
}

/** The statements of a read plan as a ListPlan: its page and, when `options` ask for it, its count. */
export function compiledPlan(plan: ReadPlan, options: ReadOptions, settings: PlanSettings): ListPlan {
  const { page, count } = listStatements(plan, settings.budget, options.count ? settings.limits : undefined);
  return { options, page, ...(count ? { count } : {}) };
}

/** The plan of a root list read of `entity` at `route` with `query`, kept or compiled now. */
export function listPlanOf(
  entity: EntityDefinition,
  route: string,
  query: Record<string, unknown>,
  settings: PlanSettings,
): ListPlan {
  return keptPlan(settings, `${route}?${JSON.stringify(query)}`, () => {
    const options = parseReadOptions(query, settings.limits);
    return compiledPlan(planRead(entity, options), options, settings);
  });
}
