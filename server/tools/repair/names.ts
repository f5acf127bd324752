// The name ladder: maps the tool name a model wrote onto a registered one. Rungs, in order:
// exact → lowercase → hyphen to underscore → camelCase to snake_case → strip a `_tool` suffix →
// unique prefix. Each rung applies the same transform to the registered names and only a
// unique match counts, so the ladder never picks between two tools. With no match the caller
// gets candidates within edit distance 3 for a "Did you mean" message.

export type NameRung =
  "exact" | "lowercase" | "hyphen_to_underscore" | "snake_case" | "strip_tool_suffix" | "unique_prefix";

export type NameMatch = { ok: true; name: string; rung: NameRung } | { ok: false; candidates: string[] };

const lower = (s: string) => s.toLowerCase();
const hyphen = (s: string) => lower(s).replace(/[-\s]+/g, "_");
const snake = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[-\s]+/g, "_")
    .toLowerCase();
const stripTool = (s: string) => snake(s).replace(/_tool$/, "") || snake(s);

const TRANSFORMS: [NameRung, (s: string) => string][] = [
  ["lowercase", lower],
  ["hyphen_to_underscore", hyphen],
  ["snake_case", snake],
  ["strip_tool_suffix", stripTool],
];

/** Precomputed lookup tables over a fixed set of names; build once per tool set. */
export class NameIndex {
  private readonly exact: Set<string>;
  private readonly tables: Map<string, string[]>[];
  private readonly stripped: { key: string; name: string }[];

  constructor(readonly names: readonly string[]) {
    this.exact = new Set(names);
    this.tables = TRANSFORMS.map(([, f]) => {
      const m = new Map<string, string[]>();
      for (const name of names) {
        const key = f(name);
        const list = m.get(key);
        if (list) list.push(name);
        else m.set(key, [name]);
      }
      return m;
    });
    this.stripped = names.map((name) => ({ key: stripTool(name), name }));
  }

  resolve(input: string): NameMatch {
    if (this.exact.has(input)) return { ok: true, name: input, rung: "exact" };
    for (let r = 0; r < TRANSFORMS.length; r++) {
      const hits = this.tables[r].get(TRANSFORMS[r][1](input));
      if (hits && hits.length === 1) return { ok: true, name: hits[0], rung: TRANSFORMS[r][0] };
    }
    const key = stripTool(input);
    // a prefix shorter than 3 characters matches too much to be a repair
    if (key.length >= 3) {
      const hits = this.stripped.filter((s) => s.key.startsWith(key));
      if (hits.length === 1) return { ok: true, name: hits[0].name, rung: "unique_prefix" };
    }
    return { ok: false, candidates: this.suggest(input) };
  }

  /** Names within edit distance 3 (case-insensitive), nearest first. */
  suggest(input: string, max = 5): string[] {
    const a = snake(input);
    const scored: { name: string; d: number }[] = [];
    for (const name of this.names) {
      const d = editDistance(a, snake(name), 3);
      if (d <= 3) scored.push({ name, d });
    }
    scored.sort((x, y) => x.d - y.d || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    return scored.slice(0, max).map((s) => s.name);
  }
}

/** Levenshtein distance, giving up (returning cap + 1) once it must exceed cap. */
export function editDistance(a: string, b: string, cap = Infinity): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  if (a === b) return 0;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (cur[j] < rowMin) rowMin = cur[j];
    }
    if (rowMin > cap) return cap + 1;
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

export function didYouMean(name: string, candidates: string[]): string {
  const base = `Unknown tool "${name}".`;
  return candidates.length > 0 ? `${base} Did you mean: ${candidates.join(", ")}?` : base;
}
