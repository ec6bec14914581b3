import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Each test file gets a database of its own, cloned from the migrated template that `npm test`
 * prepared, so files run in parallel without seeing each other's rows.
 */

function templateUrl(): URL {
  const raw = process.env.TEST_TEMPLATE_DATABASE_URL;
  if (!raw) throw new Error('TEST_TEMPLATE_DATABASE_URL is not set: run the suite with `npm test`');
  return new URL(raw);
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = templateUrl();
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const template = templateUrl();
  const templateName = template.pathname.slice(1);
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(async (client) => {
    // Concurrent clones of one template can collide briefly; retry a few times.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`create database "${name}" template "${templateName}"`);
        return;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  const url = new URL(template);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin(async (client) => void (await client.query(`drop database if exists "${name}" with (force)`))),
  };
}

/** A BullMQ key prefix no other test file uses. */
export function uniqueQueuePrefix(): string {
  return `t${process.pid}${randomBytes(3).toString('hex')}`;
}
