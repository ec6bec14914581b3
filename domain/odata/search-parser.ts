/**
 * $search (DESIGN §5): operands separated by whitespace are ANDed; `OR` binds tighter than that
 * implicit AND, so `a b OR c` is and(a, or(b, c)). One-item and/or nodes collapse to the item.
 */
import { SearchNode } from './ast';
import { syntaxError } from './odata-syntax-error';
import { scanSearch, SearchToken } from './search-scanner';

export function parseSearch(text: string, maxNodes?: number): SearchNode {
  const tokens = scanSearch(text, maxNodes);
  if (tokens.length === 0) {
    throw syntaxError('$search', text.length, '', 'expected a search term', 'but found end of input');
  }
  const groups: SearchNode[] = [];
  let i = 0;
  while (i < tokens.length) {
    const first = operandAt(tokens, i);
    const alternatives = [first];
    i++;
    for (let or = tokens[i]; or?.kind === 'or'; or = tokens[i]) {
      alternatives.push(operandAt(tokens, i + 1, or));
      i += 2;
    }
    groups.push(combine('or', alternatives));
  }
  return combine('and', groups);
}

/** The operand at `index`; an `OR` in its place (or nothing after `after`) is a dangling OR. */
function operandAt(tokens: SearchToken[], index: number, after?: SearchToken): SearchNode {
  const token = tokens[index];
  if (token?.kind === 'operand') return token.node;
  const dangling = after ?? token;
  const position = dangling?.start ?? 0;
  throw syntaxError('$search', position, 'OR', "dangling 'OR'");
}

function combine(kind: 'and' | 'or', items: SearchNode[]): SearchNode {
  const [first] = items;
  const last = items[items.length - 1];
  if (items.length === 1 && first) return first;
  const start = first?.span.start ?? 0;
  const end = last?.span.end ?? start;
  return { kind, items, span: { start, end } };
}
