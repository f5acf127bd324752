// list_files's name order on a folder of 100,000 entries in the disk's own order (shuffled
// here: ext4 lists a folder in hash order): the first 1,000 names (the default limit) kept as the
// folder streams by (runner/workspace/fs-at/smallest-names.ts, a heap of 1,001), against the
// whole folder sorted first (how the listing ordered a folder once), in the same run. Both run on the runner's event loop, which
// every workspace on it shares. Goal: at most a quarter of the full sort's time.
//   npm run bench -- list-order
import { SmallestNames } from "../runner/workspace/fs-at/smallest-names";
import { goal, printTable, ratio, throughput } from "./lib";

const N = 100_000;
const FIRST = 1_000;
const random = (() => {
  let s = 42;
  return () => (s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
})();
const names = Array.from({ length: N }, (_, i) => `${Math.floor(random() * 1e9).toString(36)}-${i}.ts`);
const entries = names.map((name) => ({ name }));

let sink = 0;
const bySelection = () => {
  const kept = new SmallestNames<{ name: string }>(FIRST + 1);
  for (const e of entries) kept.offer(e);
  for (const e of kept.sorted()) sink += e.name.length;
};
const byFullSort = () => {
  const copy = entries.slice();
  copy.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (let i = 0; i <= FIRST; i++) sink += copy[i].name.length;
};

const options = { minMs: 4_000, warmupMs: 500, rounds: 5 };
const selected = throughput(bySelection, options);
const full = throughput(byFullSort, options);
const ms = (ns: number) => (ns / 1e6).toFixed(2);
printTable(
  `first ${FIRST.toLocaleString("en")} names of ${N.toLocaleString("en")} in name order (ms per listing, fastest of 5 rounds)`,
  ["case", "ms", "vs full sort"],
  [
    ["kept by a heap as they stream, then sorted (now)", ms(selected.nsPerOp), ratio(selected.nsPerOp, full.nsPerOp)],
    ["sort the whole folder (before)", ms(full.nsPerOp), "1.00x"],
  ],
);
goal(
  "list_files orders a 100,000-entry folder's first 1,000 names in ≤ 0.25× a full sort's time",
  selected.nsPerOp <= 0.25 * full.nsPerOp,
  `${ms(selected.nsPerOp)} ms against ${ms(full.nsPerOp)} ms (${ratio(selected.nsPerOp, full.nsPerOp)})`,
);
if (sink < 0) console.log(sink);
