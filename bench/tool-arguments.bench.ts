// The argument ladder against jsonrepair on one corpus of cut-off and damaged tool arguments:
// success rate (an object came out), fidelity to what the model meant, and throughput.
// Goals (issue 3): we succeed wherever jsonrepair does, and repair at ≥ 100 MB/s.
import { cpus, loadavg } from "node:os";
import { jsonrepair } from "jsonrepair";
import { parseArguments } from "../server/tools/repair/arguments";
import { REAL_CALLS, rawControlChars, surplusClosers, trailingCommas } from "../server/tools/repair/corpus";
import { deepEqual, isFaithfulPrefix } from "../server/tools/repair/fidelity";
import { goal, printTable, ratio, throughput } from "./lib";

type Case = { kind: string; text: string; original: Record<string, unknown>; truncated: boolean };

function bigSource(lines: number): string {
  const pool = REAL_CALLS.flatMap((c) => Object.values(c.args).filter((v): v is string => typeof v === "string"))
    .join("\n")
    .split("\n");
  return Array.from(
    { length: lines },
    (_, i) => `${"  ".repeat(i % 4)}${pool[i % pool.length]} // ${i} ✓ "q" \\ end`,
  ).join("\n");
}

const bases: Record<string, unknown>[] = [
  ...REAL_CALLS.map((c) => c.args),
  { path: "src/generated/large.ts", content: bigSource(200) },
  { path: "src/generated/huge.ts", content: bigSource(1500) },
  {
    path: "src/x.ts",
    edits: Array.from({ length: 40 }, (_, i) => ({
      old_str: `let v${i} = "${i}";\n`,
      new_str: `const v${i} = '${i}'; // ü${i}\t\n`,
    })),
  },
];

function corpus(): Case[] {
  const cases: Case[] = [];
  for (const original of bases as Record<string, unknown>[]) {
    const json = JSON.stringify(original);
    const raw = rawControlChars(json);
    const cuts = 24;
    for (let k = 1; k <= cuts; k++) {
      const at = Math.floor((json.length * k) / (cuts + 1));
      cases.push({ kind: "cut off", text: json.slice(0, at), original, truncated: true });
    }
    for (let k = 1; k <= 8; k++) {
      const at = Math.floor((raw.length * k) / 9);
      cases.push({ kind: "cut off + raw newlines", text: raw.slice(0, at), original, truncated: true });
    }
    if (raw !== json) cases.push({ kind: "raw newlines/tabs", text: raw, original, truncated: false });
    cases.push({ kind: "trailing commas", text: trailingCommas(json), original, truncated: false });
    cases.push({ kind: "surplus closers", text: surplusClosers(json), original, truncated: false });
    cases.push({ kind: "all three", text: surplusClosers(trailingCommas(raw)), original, truncated: false });
  }
  return cases;
}

type Impl = { name: string; run: (text: string) => unknown };
const impls: Impl[] = [
  {
    name: "argument ladder",
    run: (t) => {
      const r = parseArguments(t);
      return r.ok ? r.value : undefined;
    },
  },
  {
    name: "jsonrepair (baseline)",
    run: (t) => {
      try {
        return JSON.parse(jsonrepair(t));
      } catch {
        return undefined;
      }
    },
  },
];

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const cases = corpus();
const bytes = cases.reduce((n, c) => n + Buffer.byteLength(c.text), 0);
console.log(
  `corpus: ${cases.length} damaged calls, ${(bytes / 1024).toFixed(1)} KiB; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} on ${cpus().length} cores`,
);

const outcomes = impls.map((impl) =>
  cases.map((c) => {
    const v = impl.run(c.text);
    const ok = isObject(v);
    const faithful = ok && (c.truncated ? isFaithfulPrefix(v, c.original) : deepEqual(v, c.original));
    return { ok, faithful };
  }),
);
const speed = impls.map((impl) => {
  const t = throughput(
    () => {
      for (const c of cases) impl.run(c.text);
    },
    { minMs: 2500 },
  );
  return bytes / 1e6 / (t.nsPerOp / 1e9);
});
// The ceiling on this machine right now: JSON.parse of the same calls undamaged.
const originals = cases.map((c) => JSON.stringify(c.original));
const originalBytes = originals.reduce((n, t) => n + Buffer.byteLength(t), 0);
const ceiling =
  originalBytes /
  1e6 /
  (throughput(
    () => {
      for (const t of originals) JSON.parse(t);
    },
    { minMs: 2500 },
  ).nsPerOp /
    1e9);
const pct = (n: number) => (100 * n) / cases.length;
printTable(
  "Argument repair: whole corpus (MB/s: fastest of 5 rounds)",
  [
    "implementation",
    { title: "success %", digits: 1 },
    { title: "faithful %", digits: 1 },
    { title: "MB/s", digits: 1 },
    "MB/s vs jsonrepair",
    "vs JSON.parse",
  ],
  [
    ...impls.map((impl, i) => [
      impl.name,
      pct(outcomes[i].filter((o) => o.ok).length),
      pct(outcomes[i].filter((o) => o.faithful).length),
      speed[i],
      ratio(speed[i], speed[1]),
      ratio(speed[i], ceiling),
    ]),
    ["JSON.parse of undamaged originals (ceiling)", "-", "-", ceiling, ratio(ceiling, speed[1]), "1.00x"],
  ],
);

const buckets: [string, (n: number) => boolean][] = [
  ["< 4 KiB", (n) => n < 4096],
  ["4-64 KiB", (n) => n >= 4096 && n < 65536],
  [">= 64 KiB", (n) => n >= 65536],
];
printTable(
  "Throughput by call size (MB/s)",
  ["size", "cases", ...impls.map((i) => i.name), "ratio", "JSON.parse of originals", "ladder vs JSON.parse"],
  buckets.map(([label, inBucket]) => {
    const picked = cases.filter((c) => inBucket(Buffer.byteLength(c.text)));
    const texts = picked.map((c) => c.text);
    const b = texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
    const mbs = impls.map(
      (impl) =>
        b /
        1e6 /
        (throughput(
          () => {
            for (const t of texts) impl.run(t);
          },
          { minMs: 1000 },
        ).nsPerOp /
          1e9),
    );
    const whole = picked.map((c) => JSON.stringify(c.original));
    const wb = whole.reduce((n, t) => n + Buffer.byteLength(t), 0);
    const parse =
      wb /
      1e6 /
      (throughput(
        () => {
          for (const t of whole) JSON.parse(t);
        },
        { minMs: 1000 },
      ).nsPerOp /
        1e9);
    return [
      label,
      String(texts.length),
      ...mbs.map((m) => m.toFixed(1)),
      ratio(mbs[0], mbs[1]),
      parse.toFixed(1),
      ratio(mbs[0], parse),
    ];
  }),
);

const kinds = [...new Set(cases.map((c) => c.kind))];
printTable(
  "By damage kind (success % / faithful %)",
  ["kind", "cases", ...impls.map((i) => i.name)],
  kinds.map((kind) => {
    const idx = cases.map((c, i) => (c.kind === kind ? i : -1)).filter((i) => i >= 0);
    const cell = (o: { ok: boolean; faithful: boolean }[]) =>
      `${((100 * idx.filter((i) => o[i].ok).length) / idx.length).toFixed(0)} / ${((100 * idx.filter((i) => o[i].faithful).length) / idx.length).toFixed(0)}`;
    return [kind, String(idx.length), ...outcomes.map(cell)];
  }),
);

const weFailTheyDont = cases.filter((_, i) => !outcomes[0][i].ok && outcomes[1][i].ok).length;
const weUnfaithfulTheyFaithful = cases.filter((_, i) => !outcomes[0][i].faithful && outcomes[1][i].faithful).length;
console.log("");
goal(
  "no failure where jsonrepair succeeds",
  weFailTheyDont === 0,
  `${weFailTheyDont} such case(s); ${weUnfaithfulTheyFaithful} where only jsonrepair was faithful`,
);
goal(
  "throughput ≥ 100 MB/s",
  speed[0] >= 100,
  `${speed[0].toFixed(1)} MB/s (jsonrepair ${speed[1].toFixed(1)} MB/s, ${ratio(speed[0], speed[1])})`,
);
