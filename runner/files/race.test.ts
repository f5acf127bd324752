// The symlink race, for real, against the runner's file operations called directly: a background
// process swaps `dir` between a folder inside the workspace and a link to a folder outside with
// a secret in it, thousands of times while each operation runs on a path through `dir`. No
// operation may ever read the secret, list the outside folder, see an outside file exist, or
// create, change, move or delete anything outside.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { opContext } from "../testing/exec";
import type { OpContext } from "../ops";
import { Workspace } from "../workspace/workspace";
import { fileOps } from "./index";
import { hammer, OUTSIDE_ONLY, raceFixture, SECRET, type RaceFixture } from "./race-fixture";

const TRIES = 2000;
/** Not required to meet the link: the whole tree's listing skips it, and mkdir -p makes `dir`
 *  itself whenever the swap leaves it absent, which stops the swapping until it tidies up. */
const MET_LINK_BY_NAME = new Set(["list_files (root)", "ide_mkdir"]);
// A bound, not a target: on a quiet machine each operation's 2,000 tries take 0.3-5 s.
const MS = 90_000;

let fx: RaceFixture;
let ws: Workspace;
let ctx: OpContext;
let before: string;
beforeEach(async () => {
  fx = await raceFixture();
  ws = await Workspace.open(fx.ws, { watch: false });
  ctx = opContext(ws);
  before = await fx.snapshot();
  await fx.startSwapping();
});
afterEach(async () => {
  ws?.dispose();
  await fx?.cleanup();
});

/** Runs an op; a thrown refusal counts as its answer. */
async function op(
  name: string,
  input: unknown,
): Promise<{ ok: boolean; output: string; meta?: Record<string, unknown> }> {
  const def = fileOps[name];
  const parsed =
    name in PERSON_FILE_OPS
      ? PERSON_FILE_OPS[name as keyof typeof PERSON_FILE_OPS].parse(input)
      : def.input.parse(input);
  return def.run(parsed, ctx).catch((err: Error) => ({ ok: false, output: err.message }));
}

const leaks = (r: { output: string; meta?: Record<string, unknown> }) => {
  const raw =
    typeof r.output === "string" && /^[A-Za-z0-9+/=]+$/.test(r.output)
      ? Buffer.from(r.output, "base64").toString("latin1")
      : "";
  return `${r.output}${raw}${JSON.stringify(r.meta ?? {})}`.includes(SECRET) || r.output.includes(OUTSIDE_ONLY);
};

describe("a folder swapped for a link to outside, while each operation runs (direct)", () => {
  const cases: Array<
    [string, (i: number) => Promise<{ ok: boolean; output: string; meta?: Record<string, unknown> }>]
  > = [
    ["read_file", () => op("read_file", { path: "dir/secret.txt" })],
    ["ide_read", () => op("ide_read", { path: "dir/secret.txt" })],
    ["ide_read_bytes", () => op("ide_read_bytes", { path: "dir/secret.txt" })],
    ["list_files", () => op("list_files", { path: "dir" })],
    ["list_files (root)", () => op("list_files", {})],
    [
      "stat (resolve)",
      async () => {
        const r = await ws
          .resolve(`dir/${OUTSIDE_ONLY}`, "read")
          .catch((e: Error) => ({ exists: false, error: e.message }));
        return {
          ok: !("error" in r),
          output: r.exists ? `found ${OUTSIDE_ONLY}` : "error" in r ? r.error.replace(OUTSIDE_ONLY, "x") : "",
        };
      },
    ],
    // A few names: each write measures the whole uncommitted diff, which grows with every new file.
    ["write_file", (i) => op("write_file", { path: `dir/new-${i % 50}.txt`, content: "written\n" })],
    ["ide_write (save)", () => op("ide_write", { path: "dir/secret.txt", content: "saved\n" })],
    [
      "ide_write_bytes (upload)",
      (i) =>
        op("ide_write_bytes", {
          path: `dir/up-${i % 7}.bin`,
          base64: Buffer.from("up").toString("base64"),
          overwrite: true,
        }),
    ],
    ["ide_mkdir", (i) => op("ide_mkdir", { path: `dir/made-${i}/deeper` })],
    ["ide_rename", () => op("ide_rename", { from: "dir/a.txt", to: "dir/moved.txt" })],
    ["ide_rename (folder)", () => op("ide_rename", { from: "dir", to: "elsewhere/dir" })],
    ["ide_delete", () => op("ide_delete", { path: "dir/victim.txt" })],
    ["ide_delete (folder)", () => op("ide_delete", { path: "dir" })],
    ["ide_replace", () => op("ide_replace", { pattern: "TOP", replacement: "XXX", paths: ["dir/secret.txt"] })],
  ];
  it.each(cases)(
    "%s never reaches outside",
    async (name, attempt) => {
      const seen: string[] = [];
      const outcomes = new Map<string, number>();
      const ran = await hammer(TRIES, MS, async (i) => {
        const r = await attempt(i);
        if (leaks(r)) seen.push(r.output.slice(0, 200));
        const kind = r.ok
          ? "ok"
          : r.output
              .replace(/"[^"]*"/g, "P")
              .replace(/\S*\d\S*/g, "N")
              .slice(0, 80);
        outcomes.set(kind, (outcomes.get(kind) ?? 0) + 1);
      });
      expect(seen).toEqual([]);
      expect(await fx.snapshot()).toBe(before);
      expect(ran, JSON.stringify([...outcomes])).toBeGreaterThanOrEqual(TRIES);
      // The attack was live: some tries met the link (and were refused), others the folder.
      if (!MET_LINK_BY_NAME.has(name))
        expect(
          [...outcomes.keys()].some((k) => /outside the workspace|symbolic link/.test(k)),
          JSON.stringify([...outcomes]),
        ).toBe(true);
    },
    MS + 30_000,
  );
});
