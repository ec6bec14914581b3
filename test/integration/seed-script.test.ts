import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { databasePerFile } from '../support/database-per-file';

/**
 * `npm run seed -- --schemes N` runs scripts/seed.sh, which uses DATABASE_URL when given and the
 * local stores of npm start otherwise (that branch is the shell's start_postgres, which npm start
 * runs too). Here: the given database, the arguments passed through, the rows there afterwards.
 */

const root = path.resolve(__dirname, '../../..');
const database = databasePerFile(1);

async function count(table: string): Promise<number> {
  return (await database.knex(table).count<{ count: number }[]>('* as count'))[0]!.count;
}

test('scripts/seed.sh seeds the given database with the schemes asked for', async (t) => {
  const { stderr } = await promisify(execFile)('bash', ['scripts/seed.sh', '--schemes', '3', '--seed', '7'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: database.current.url },
  });
  t.regex(stderr, /\[seed\] \d+ rows in .* search documents/);
  t.is(await count('schemes'), 3);
  t.true((await count('search_fields')) > 0);
});
