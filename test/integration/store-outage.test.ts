import test from 'ava';
import { createKnex } from '../../db/knex';
import { CuttableProxy } from '../support/cuttable-proxy';
import { eventually } from '../support/queues';
import { startStack, type HttpResult, type Stack } from '../support/stack';

/**
 * Postgres unreachable, restarting, out of pooled connections or cutting a connection mid-statement:
 * reads answer 503 with Retry-After and a body that names no host, port or driver (DESIGN §13),
 * and serve again as soon as Postgres is back. The API reaches Postgres through a TCP proxy the
 * test cuts and restores, as a restart would.
 */

let stack: Stack;
let proxy: CuttableProxy;
test.before(async () => {
  proxy = new CuttableProxy(new URL(process.env.TEST_TEMPLATE_DATABASE_URL!));
  await proxy.open();
  stack = await startStack({
    workers: [],
    env: { DB_POOL_MAX: '2' },
    // The stack's own database, reached through the proxy.
    databaseUrl: (url) => {
      const proxied = new URL(url);
      proxied.port = String(proxy.port);
      return proxied.toString();
    },
  });
});
test.after.always(async () => {
  await proxy?.open().catch(() => undefined);
  await stack?.close();
  await proxy?.cut();
});

function assertOutage(t: import('ava').ExecutionContext, res: HttpResult): void {
  t.is(res.status, 503, res.text);
  t.is(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.is(res.headers.get('retry-after'), '5');
  t.like(res.body as object, { type: 'about:blank', title: 'Service Unavailable', status: 503 });
  t.notRegex(res.text, /ECONNREFUSED|127\.0\.0\.1|postgres|knex|select|terminat|pool/i);
}

test.serial(
  'Postgres unreachable: 503 with Retry-After for reads and readiness; 200 again once it is back',
  async (t) => {
    t.is((await stack.get('/Schemes')).status, 200);
    await proxy.cut();
    assertOutage(t, await stack.get('/Schemes'));
    assertOutage(t, await stack.get("/Companies?$filter=Name eq 'x'"));
    const ready = await eventually(async () => {
      const res = await stack.get('/health/ready');
      return res.status === 503 ? res : undefined;
    });
    t.is(ready.headers.get('retry-after'), '5');
    await proxy.open();
    await eventually(async () => (await stack.get('/Schemes')).status === 200);
  },
);

test.serial('a connection cut mid-statement is a 503, and requests are served again right after', async (t) => {
  // A read that waits on a lock, then has its backend terminated (as a failover or restart would).
  const admin = createKnex(stack.directDatabaseUrl, 2);
  t.teardown(() => admin.destroy());
  const locker = await admin.transaction();
  try {
    await locker.raw('lock table companies in access exclusive mode');
    const pending = stack.get('/Companies');
    const pid = await eventually(async () => {
      const { rows } = await admin.raw<{ rows: { pid: number }[] }>(
        `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%companies%'`,
      );
      return rows[0]?.pid;
    });
    await admin.raw('select pg_terminate_backend(?)', [pid]);
    assertOutage(t, await pending);
  } finally {
    await locker.rollback();
  }
  // The pool drops the dead connection; requests are served again at once after.
  await eventually(async () => (await stack.get('/Companies')).status === 200, 5000);
  t.is((await stack.get('/Companies')).status, 200);
});

test.serial('every pooled connection busy past the acquire timeout: 503, not a hang or a 500', async (t) => {
  // DB_POOL_MAX=2: hold both of the API's connections.
  const held = [await stack.knex.transaction(), await stack.knex.transaction()];
  try {
    assertOutage(t, await stack.get('/Schemes'));
  } finally {
    await Promise.all(held.map((trx) => trx.rollback()));
  }
  t.is((await stack.get('/Schemes')).status, 200);
});
