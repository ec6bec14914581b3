import test from 'ava';
import { readableEntityOf } from '../../domain/entities/entity-key';
import { DEFAULT_READ_LIMITS } from '../../domain/queries/read-limits';
import { listPlanOf, type PlanSettings } from '../../db/query/list-plans';

/** The plans kept of list reads (db/query/list-plans.ts): what is kept, for whom, and for how long. */

const Schemes = readableEntityOf('Schemes');
const settings = (): PlanSettings => ({ limits: { ...DEFAULT_READ_LIMITS, maxTop: 1000 }, budget: {} });

test('the same route and query get the kept plan; another query, route or settings its own', (t) => {
  const s = settings();
  const query = { $top: '60', $expand: 'Address($expand=Country),Companies', $count: 'true' };
  const plan = listPlanOf(Schemes, 'Schemes', query, s);
  t.is(listPlanOf(Schemes, 'Schemes', { ...query }, s), plan);
  t.not(listPlanOf(Schemes, 'Schemes', { ...query, $top: '61' }, s), plan);
  t.not(listPlanOf(Schemes, 'Schemes', query, settings()), plan);
  t.truthy(plan.count, '$count=true compiles the count');
  t.is(plan.options.top, 60);
  t.regex(plan.page.sql, /json_agg/);
});

test('a kept plan cannot be changed by a caller', (t) => {
  const plan = listPlanOf(Schemes, 'Schemes', { $filter: "SchemeName eq 'a'", $count: 'true' }, settings());
  t.true(Object.isFrozen(plan) && Object.isFrozen(plan.page.params) && Object.isFrozen(plan.count!.params));
  t.throws(() => (plan.page.params as unknown[]).push('x'));
});

test('a query that does not parse throws each time and is not kept', (t) => {
  const s = settings();
  for (let i = 0; i < 2; i++) t.throws(() => listPlanOf(Schemes, 'Schemes', { $filter: 'Nope eq 1' }, s));
});

test('at most 256 plans are kept per settings, the least recently used going first; a long query is not kept', (t) => {
  const s = settings();
  const first = listPlanOf(Schemes, 'Schemes', { $top: '1' }, s);
  const second = listPlanOf(Schemes, 'Schemes', { $top: '2' }, s);
  t.is(listPlanOf(Schemes, 'Schemes', { $top: '1' }, s), first, 'used again: now the most recent');
  for (let top = 3; top <= 257; top++) listPlanOf(Schemes, 'Schemes', { $top: String(top) }, s);
  t.is(listPlanOf(Schemes, 'Schemes', { $top: '1' }, s), first);
  t.not(listPlanOf(Schemes, 'Schemes', { $top: '2' }, s), second, 'the least recently used went');
  const long = { $filter: `SchemeName eq '${'x'.repeat(2100)}'` };
  t.not(listPlanOf(Schemes, 'Schemes', long, s), listPlanOf(Schemes, 'Schemes', long, s));
});
