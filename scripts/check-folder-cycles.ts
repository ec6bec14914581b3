import { readFileSync } from 'node:fs';

/**
 * Folder-level import cycles (`domain/validation` → `domain/writes` → `domain/validation`), which
 * madge's file-level check cannot see. Reads madge's `--json` graph on stdin; exits 1 naming each
 * cycle. Run by `npm test` next to the file-level check.
 */

const graph = JSON.parse(readFileSync(0, 'utf8')) as Record<string, string[]>;
/** `domain/validation/write-body.ts` → `domain/validation`; top-level files keep their folder. */
const folderOf = (file: string) => file.split('/').slice(0, 2).join('/').replace(/\.ts$/, '');

const edges = new Map<string, Set<string>>();
for (const [file, deps] of Object.entries(graph)) {
  const from = folderOf(file);
  for (const dep of deps) {
    const to = folderOf(dep);
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from)!.add(to);
  }
}

// Tarjan's strongly connected components: any component of two or more folders is a cycle.
let index = 0;
const indexOf = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const cycles: string[][] = [];
function visit(node: string): void {
  indexOf.set(node, index);
  low.set(node, index);
  index += 1;
  stack.push(node);
  onStack.add(node);
  for (const next of edges.get(node) ?? []) {
    if (!indexOf.has(next)) {
      visit(next);
      low.set(node, Math.min(low.get(node)!, low.get(next)!));
    } else if (onStack.has(next)) {
      low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
    }
  }
  if (low.get(node) === indexOf.get(node)) {
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const node of edges.keys()) if (!indexOf.has(node)) visit(node);

if (cycles.length) {
  for (const cycle of cycles) console.error(`folder cycle: ${cycle.join(' ↔ ')}`);
  process.exit(1);
}
console.error(`no folder cycles (${edges.size} folders)`);
