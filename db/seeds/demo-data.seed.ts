import type { Knex } from 'knex';
import { generateData } from './generated-data.seed';
import { rebuildAllDocuments } from '../search/search-indexer';

/**
 * The demo data set a first `npm start` loads (DESIGN §15): 300 schemes with their addresses,
 * companies, company links, notes, tags, developments and events, from the generator with a fixed
 * seed. On a fresh database the keys start at 1, so the encoded Ids are the same on every machine
 * and the README's examples can name them (a test checks that they answer with data).
 */
export const DEMO_DATA = { schemes: 300, seed: 15 } as const;

type DemoOutcome =
  { loaded: true; rows: number; documents: number; firstSchemeKey: number } | { loaded: false; schemes: number };

/**
 * Loads the demo data set and its search documents, unless the database already has schemes;
 * `onLoading` is told when the loading starts.
 */
export async function loadDemoDataIfNoSchemes(
  knex: Knex,
  onLoading: () => void = () => undefined,
): Promise<DemoOutcome> {
  const schemes = async () => Number((await knex('schemes').count<{ count: string }[]>('* as count'))[0]!.count);
  const present = await schemes();
  if (present > 0) return { loaded: false, schemes: present };
  onLoading();
  const counts = await generateData(knex, { ...DEMO_DATA, onlyWithoutSchemes: true });
  // Someone else's schemes arrived between the count and the load's lock.
  if (!counts) return { loaded: false, schemes: await schemes() };
  const { documents } = await rebuildAllDocuments(knex, async () => undefined);
  const first = (await knex('schemes').min('id as min').first()) as { min: number };
  return {
    loaded: true,
    rows: Object.values(counts).reduce((a, b) => a + b, 0),
    documents,
    firstSchemeKey: first.min,
  };
}
