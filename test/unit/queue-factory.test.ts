import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * BullMQ `Queue` objects of the service are built in one place, infra/queues.ts (`openQueue`): the
 * queue's key prefix (a hash tag on a Redis Cluster) and its error listener cannot be forgotten
 * elsewhere. bench/ and test/ may build their own.
 */

const root = path.resolve(__dirname, '../../..');
const FACTORY = 'infra/queues.ts';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sources(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}

test('only infra/queues.ts calls `new Queue(` in the service', (t) => {
  const building = ['api', 'workers', 'infra', 'db', 'domain']
    .flatMap((dir) => sources(path.join(root, dir)))
    .filter((file) => /\bnew\s+Queue\s*[(<]/.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(root, file));
  t.deepEqual(building, [FACTORY]);
});
