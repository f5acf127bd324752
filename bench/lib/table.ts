// Prints benchmark results as an aligned table, with ratio columns against a baseline row
// measured in the same run, and goal lines that set a failing exit code when missed.

export type Cell = string | number;

export interface Column {
  title: string;
  /** Digits after the point for numbers (default 2). */
  digits?: number;
}

function format(v: Cell, digits = 2): string {
  if (typeof v === "string") return v;
  if (!Number.isFinite(v)) return String(v);
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function printTable(title: string, columns: (string | Column)[], rows: Cell[][]): void {
  const cols = columns.map((c) => (typeof c === "string" ? { title: c } : c));
  const text = rows.map((r) => r.map((v, i) => format(v, cols[i]?.digits)));
  const widths = cols.map((c, i) => Math.max(c.title.length, ...text.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((s, i) => (i === 0 ? s.padEnd(widths[i]) : s.padStart(widths[i]))).join("  ");
  console.log(`\n${title}`);
  console.log(line(cols.map((c) => c.title)));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of text) console.log(line(r));
}

/** a / b as "1.23x"; higherIsBetter only documents intent in the column title. */
export function ratio(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return "n/a";
  return `${(a / b).toFixed(2)}x`;
}

const goals: { name: string; met: boolean; detail: string }[] = [];

/** Records and prints a goal; the process exits non-zero at the end when any goal was missed. */
export function goal(name: string, met: boolean, detail: string): void {
  goals.push({ name, met, detail });
  console.log(`goal ${met ? "MET    " : "MISSED "} ${name}: ${detail}`);
  if (!met) process.exitCode = 1;
}

export function goalsMissed(): number {
  return goals.filter((g) => !g.met).length;
}
