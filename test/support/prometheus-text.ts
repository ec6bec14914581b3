/**
 * A strict reader of the Prometheus text format 0.0.4 (prometheus.io/docs/instrumenting/
 * exposition_formats), for tests: it throws wherever Prometheus would refuse the scrape — a family
 * typed twice, a TYPE after its samples, a family's samples not grouped together, a label named
 * twice in one sample, a malformed label or value, a histogram whose `+Inf` bucket is not its count.
 * No parser of that format is installed (prom-client writes it but reads none).
 */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: string;
  help?: string;
  samples: PromSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

/** A float as Prometheus reads it (Go's ParseFloat: `NaN`, `Inf` in any case, prom-client writes `Nan`). */
function parseValue(raw: string, line: string): number {
  const special = /^([-+]?)(inf|infinity)$/i.exec(raw);
  if (special) return special[1] === '-' ? -Infinity : Infinity;
  if (/^nan$/i.test(raw)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`bad value in: ${line}`);
  return Number(raw);
}

/** `{a="x",b="y"}` at the start of `rest`: the labels and what follows the closing brace. */
function parseLabels(rest: string, line: string): { labels: Record<string, string>; after: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (rest[i] !== '}') {
    const name = LABEL_NAME.exec(rest.slice(i))?.[0];
    if (!name || rest[i + name.length] !== '=' || rest[i + name.length + 1] !== '"') {
      throw new Error(`bad label in: ${line}`);
    }
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    i += name.length + 2;
    let value = '';
    for (; rest[i] !== '"'; i++) {
      if (i >= rest.length || rest[i] === '\n') throw new Error(`unterminated label value in: ${line}`);
      if (rest[i] === '\\') {
        const escaped = rest[++i];
        if (escaped === 'n') value += '\n';
        else if (escaped === '\\' || escaped === '"') value += escaped;
        else throw new Error(`bad escape in: ${line}`);
      } else value += rest[i];
    }
    labels[name] = value;
    i++;
    if (rest[i] === ',') i++;
    else if (rest[i] !== '}') throw new Error(`expected , or } in: ${line}`);
  }
  return { labels, after: rest.slice(i + 1) };
}

/** The families of a scrape by name, each with its samples; throws on what Prometheus refuses. */
export function parsePrometheusText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  const helps = new Map<string, string>();
  const closed = new Set<string>();
  let current: string | undefined;
  const enter = (name: string, line: string) => {
    if (current === name) return;
    if (closed.has(name)) throw new Error(`family ${name} is not grouped together, at: ${line}`);
    if (current !== undefined) closed.add(current);
    current = name;
  };
  const familyOf = (sampleName: string): string => {
    if (families.has(sampleName)) return sampleName;
    for (const [name, family] of families) {
      if ((SUFFIXES[family.type] ?? []).some((suffix) => sampleName === `${name}${suffix}`)) return name;
    }
    families.set(sampleName, { name: sampleName, type: 'untyped', samples: [] });
    return sampleName;
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest = ''] = meta as unknown as [string, string, string, string?];
      if (!NAME.test(name) || NAME.exec(name)![0] !== name) throw new Error(`bad metric name in: ${line}`);
      enter(name, line);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`second HELP for ${name}`);
        helps.set(name, rest);
      } else {
        if (families.has(name)) throw new Error(`second TYPE for ${name}, or TYPE after its samples`);
        if (!TYPES.has(rest.trim())) throw new Error(`bad type in: ${line}`);
        families.set(name, { name, type: rest.trim(), samples: [] });
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`not a sample: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, after: rest } = parseLabels(rest, line));
    const fields = rest.trim().split(/\s+/);
    if (!rest.startsWith(' ') || fields.length < 1 || fields.length > 2) throw new Error(`bad sample: ${line}`);
    const family = familyOf(name);
    enter(family, line);
    families.get(family)!.samples.push({ name, labels, value: parseValue(fields[0]!, line) });
  }
  for (const family of families.values()) {
    if (helps.has(family.name)) family.help = helps.get(family.name);
    if (family.type === 'histogram') checkHistogram(family);
  }
  return families;
}

/** Every label set's `+Inf` bucket equals its `_count`. */
function checkHistogram(family: PromFamily): void {
  const key = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  const infs = new Map<string, number>();
  for (const s of family.samples)
    if (s.name.endsWith('_bucket') && s.labels.le === '+Inf') infs.set(key(s.labels), s.value);
  for (const s of family.samples) {
    if (s.name.endsWith('_count') && infs.get(key(s.labels)) !== s.value) {
      throw new Error(`${family.name}: +Inf bucket is not the count for ${key(s.labels)}`);
    }
  }
}

/** The sum of the samples named `name` whose labels include `labels`, or undefined when none. */
export function sampleOf(
  families: Map<string, PromFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let total: number | undefined;
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        total = (total ?? 0) + s.value;
    }
  }
  return total;
}
