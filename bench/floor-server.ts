import express from 'express';
import pg from 'pg';
import { HAND_LISTS, HAND_PEERS, handKeyed } from './handwritten-floor';
import { READ_SCENARIOS, keyedStatement, listStatements, positional } from './scenarios';

/**
 * The floor: a bare Express + pg server that runs the service's own statements with nothing around
 * them (no parsing, validation, auth, logging or queue), and a write path that applies the same
 * change in one direct transaction. Under /hand/… the second read floor: the hand-written
 * statements of handwritten-floor.ts, returning the same bytes. Started by bench/run.ts as a
 * separate process.
 */

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_MAX ?? 20) });

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(express.json({ type: ['application/json', 'application/json-patch+json'] }));

app.get('/floor/keyed/:id', async (req, res) => {
  const { rows } = await pool.query<{ json: string; version: number }>(
    positional('floor_keyed', keyedStatement(Number(req.params.id))),
  );
  if (!rows[0]) {
    res.status(404).end();
    return;
  }
  res.setHeader('ETag', `"${rows[0].version}"`);
  res.type('application/json').send(rows[0].json);
});

READ_SCENARIOS.forEach((scenario, i) => {
  if (!scenario.query) return;
  const { page, count } = listStatements(scenario.query);
  const pageQuery = positional(`floor_page_${i}`, page);
  const countQuery = count ? positional(`floor_count_${i}`, count) : undefined;
  app.get(`/floor/list/${i}`, async (_req, res) => {
    const [rows, total] = await Promise.all([
      pool.query<{ json: string }>(pageQuery),
      countQuery ? pool.query<{ n: number }>(countQuery) : undefined,
    ]);
    if (total) res.setHeader('X-Total-Count', String(Math.min(total.rows[0]?.n ?? 0, count?.limit ?? Infinity)));
    res.type('application/json').send(rows.rows[0]?.json ?? '[]');
  });
});

app.get('/hand/keyed/:id', async (req, res) => {
  const row = await handKeyed(pool, Number(req.params.id));
  if (!row) {
    res.status(404).end();
    return;
  }
  res.setHeader('ETag', `"${row.version}"`);
  res.type('application/json').send(row.json);
});

READ_SCENARIOS.forEach((scenario, i) => {
  const read = HAND_LISTS[scenario.name];
  if (!scenario.query || !read) return;
  const query = scenario.query;
  app.get(`/hand/list/${i}`, async (_req, res) => {
    const { json, count } = await read(pool, query);
    if (count !== undefined) res.setHeader('X-Total-Count', String(count));
    res.type('application/json').send(json);
  });
});

// The peers' scenarios c and d by hand (bench/peers/procedure/hand-target.json): database ids.
app.get('/hand/peers/filtered', async (req, res) => {
  const term = String(req.query.term);
  if (!/^\w+$/.test(term)) return void res.status(400).end();
  const { json, count } = await HAND_PEERS.filtered(pool, term, Number(req.query.bt), 60, 0);
  res.setHeader('X-Total-Count', String(count));
  res.type('application/json').send(json);
});
app.get('/hand/peers/deep', async (req, res) => {
  const { json } = await HAND_PEERS.deep(pool, 60, Number(req.query.skip ?? 50_000));
  res.type('application/json').send(json);
});

app.post('/floor/schemes', async (req, res) => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ encoded_id: string }>(
      'insert into schemes (scheme_name) values ($1) returning encoded_id',
      [req.body.SchemeName],
    );
    await client.query('commit');
    res.status(201).setHeader('Location', `/Schemes/${rows[0]!.encoded_id}`).end();
  } catch (err) {
    await client.query('rollback');
    throw err;
  } finally {
    client.release();
  }
});

app.patch('/floor/schemes/:id', async (req, res) => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select id from schemes where id = $1 for update', [Number(req.params.id)]);
    await client.query('update schemes set total_units = $1 where id = $2', [
      (req.body as { value: number }[])[0]?.value,
      Number(req.params.id),
    ]);
    await client.query('commit');
    res.status(204).end();
  } catch (err) {
    await client.query('rollback');
    throw err;
  } finally {
    client.release();
  }
});

const server = app.listen(Number(process.env.PORT ?? 3902), '127.0.0.1', () => console.log('floor ready'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
