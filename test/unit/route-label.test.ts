import test from 'ava';
import fc from 'fast-check';
import { ENTITIES, READ_MODELS } from '../../domain/entities';
import { UNMATCHED, routeLabel } from '../../api/http/route-label';
import { labelOf } from '../../api/routes/route';
import { ROUTES as ROUTE_TABLE } from '../../api/routes/route-table';

/** Every value the `route` label of http_request_duration_seconds may take: one per route-table entry, and `unmatched`. */
const ROUTES = [...ENTITIES, ...READ_MODELS].map((e) => e.route);
const ALLOWED = new Set([UNMATCHED, ...ROUTE_TABLE.map(labelOf)]);

test('paths name their route pattern, never a key or id', (t) => {
  const cases: [string, string][] = [
    ['/Schemes', '/Schemes'],
    ['/Schemes/', '/Schemes'],
    ['/Schemes?$filter=SchemeName%20eq%20%27x%27', '/Schemes'],
    ['/Schemes/S-ABC123', '/Schemes/{key}'],
    ['/Schemes/$count?$filter=x', '/Schemes/$count'],
    ['/Countries/GB', '/Countries/{key}'],
    ['/Activities', '/Activities'],
    ['/$batch', '/$batch'],
    ['/Changes?since=h1am3Q', '/Changes'],
    ['/Commands/0f0e-11', '/Commands/{id}'],
    ['/jobs', '/Jobs'],
    ['/Jobs/commands/42', '/Jobs/{queue}/{id}'],
    ['/Jobs/commands/42/retry', '/Jobs/{queue}/{id}/retry'],
    ['/Roles/Assignments/7', '/Roles/Assignments/{id}'],
    ['/Subscriptions?$top=5', '/Subscriptions'],
    ['/Subscriptions/AbC12x', '/Subscriptions/{id}'],
    ['/subscriptions/AbC12x/Deliveries', '/Subscriptions/{id}/Deliveries'],
    ['/Export/Schemes?format=csv', '/Export/Schemes'],
    ['/admin/queues/api/queues?x=1', '/admin/queues'],
    ['/admin/queues/auth/callback?code=x', '/admin/queues/auth/callback'],
    ['/openapi.json?flat=true', '/openapi.json'],
    ['/docs/', '/docs'],
    ['/docs/swagger-ui.css', '/docs/{asset}'],
    ['/%24batch', '/$batch'],
    ['/%53chemes/x', '/Schemes/{key}'],
    ['/schemes', UNMATCHED],
    ['/NoSuchThing', UNMATCHED],
    ['/Schemes/a/b', UNMATCHED],
    ['/Export/Nothing', UNMATCHED],
    ['/%E0%A4%A', UNMATCHED],
    ['', UNMATCHED],
  ];
  for (const [url, label] of cases) t.is(routeLabel(url), label, url);
});

test('arbitrary URLs map into the fixed set of labels (bounded cardinality)', (t) => {
  const segment = fc.oneof(
    fc.constantFrom(
      ...ROUTES,
      'Jobs',
      'Roles',
      'Assignments',
      'Subscriptions',
      'Deliveries',
      'Export',
      'Commands',
      '$count',
      'admin',
      'queues',
      '',
    ),
    fc.string(),
    fc.webSegment(),
  );
  const url = fc.oneof(
    fc.webUrl({ withQueryParameters: true, withFragments: true }).map((u) => new URL(u).pathname + new URL(u).search),
    fc.array(segment, { maxLength: 6 }).map((segments) => `/${segments.join('/')}`),
    fc.string(),
  );
  fc.assert(
    fc.property(url, (u) => {
      const label = routeLabel(u);
      if (!ALLOWED.has(label)) t.log(u, label);
      return ALLOWED.has(label);
    }),
    { numRuns: 2000 },
  );
  t.pass();
});
