/**
 * Several processes' Prometheus text (format 0.0.4) as one answer, each sample labelled with the
 * process kind it came from (`process="commands"`). The text format wants every family once, its
 * `# HELP` and `# TYPE` first and all its samples after them: two processes both serving
 * `process_cpu_user_seconds_total` cannot simply be concatenated, so the families are regrouped.
 * prom-client aggregates only its own JSON form (AggregatorRegistry) and parses no text.
 */

/** One process's scrape and the kind it is labelled with. */
export interface ProcessScrape {
  process: string;
  text: string;
}

interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: string[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const META = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*)(?: |$)/;

/** A sample named `name` belongs to `family` (a histogram's `_bucket`, `_sum`, `_count` included). */
const belongsTo = (name: string, family: Family) => name === family.name || name.startsWith(`${family.name}_`);

/** The families of one scrape in the order served; other comments and blank lines are dropped. */
function familiesOf(text: string): Family[] {
  const families: Family[] = [];
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    const meta = META.exec(line);
    if (meta) {
      const name = meta[2]!;
      if (current?.name !== name) families.push((current = { name, samples: [] }));
      if (meta[1] === 'HELP') current.help = line;
      else current.type = line;
      continue;
    }
    const name = METRIC_NAME.exec(line)?.[0];
    if (name === undefined) continue; // a comment or a blank line
    if (!current || !belongsTo(name, current)) families.push((current = { name, samples: [] }));
    current.samples.push(line);
  }
  return families;
}

const escapeLabelValue = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** `name{a="x"} 1` → `name{process="kind",a="x"} 1`; `name 1` → `name{process="kind"} 1`. */
function withProcessLabel(line: string, label: string): string {
  const name = METRIC_NAME.exec(line)![0];
  const rest = line.slice(name.length);
  if (!rest.startsWith('{')) return `${name}{${label}}${rest}`;
  return `${name}{${label}${rest.startsWith('{}') ? '' : ','}${rest.slice(1)}`;
}

/**
 * One scrape of every process: each family once (HELP and TYPE from the first process serving
 * it), then every process's samples of it, in the order of `scrapes`. A family a later process
 * serves with another TYPE is left out of the answer with a comment saying so, never mixed in.
 */
export function mergeScrapes(scrapes: ProcessScrape[]): string {
  const merged = new Map<string, Family>();
  const leftOut: string[] = [];
  for (const scrape of scrapes) {
    const label = `process="${escapeLabelValue(scrape.process)}"`;
    for (const family of familiesOf(scrape.text)) {
      const into = merged.get(family.name) ?? { name: family.name, samples: [] };
      if (into.type !== undefined && family.type !== undefined && into.type !== family.type) {
        leftOut.push(
          `# ${family.name} of process ${scrape.process} left out: ${family.type.slice(2)}, not ${into.type.slice(2)}`,
        );
        continue;
      }
      into.help ??= family.help;
      into.type ??= family.type;
      into.samples.push(...family.samples.map((line) => withProcessLabel(line, label)));
      merged.set(family.name, into);
    }
  }
  const blocks = [...merged.values()].map((f) =>
    [f.help, f.type, ...f.samples].filter((l) => l !== undefined).join('\n'),
  );
  return `${[...blocks, ...leftOut].join('\n\n')}\n`;
}
