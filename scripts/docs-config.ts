import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { environmentTable } from '../domain/config/environment';

/**
 * `npm run docs:config`: writes the table of every environment variable (domain/config/
 * environment.ts) between the markers of docs/configuration.md. A test fails when they differ.
 */

export const CONFIG_DOC = path.resolve(__dirname, '../../docs/configuration.md');
export const START = '<!-- environment table: npm run docs:config -->';
export const END = '<!-- end of environment table -->';

const doc = readFileSync(CONFIG_DOC, 'utf8');
const from = doc.indexOf(START);
const to = doc.indexOf(END);
if (from < 0 || to < from) throw new Error(`docs/configuration.md lacks the markers ${START} … ${END}`);
writeFileSync(CONFIG_DOC, `${doc.slice(0, from + START.length)}\n\n${environmentTable()}\n\n${doc.slice(to)}`);
console.log('docs/configuration.md: environment table written (run prettier --write docs to align it)');
