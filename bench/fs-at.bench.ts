// What confinement by descriptor costs on the runner's hot paths: read_file of a file 12 folders
// deep and list_files of a 3-level tree (300 files), with every path walked component by
// component from the workspace root's descriptor (runner/workspace/fs-at), against the same work
// by name with one realpath check first (how the runner resolved paths before, and what a race
// could get past). Goal: read_file within 3x of the by-name read, list_files within 2x.
import { lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { opContext } from "../runner/testing/exec";
import { listFilesOp } from "../runner/files/list";
import { readFileOp } from "../runner/files/read";
import { Workspace } from "../runner/workspace/workspace";
import { goal, printTable, ratio } from "./lib";

/** µs per call of an async fn: the fastest of 5 rounds of `n` calls, after a warm-up. */
async function perCall(n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(n, 200); i++) await fn();
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) await fn();
    best = Math.min(best, ((performance.now() - t) * 1000) / n);
  }
  return best;
}

const root = await realpath(await mkdtemp(join(tmpdir(), "quiver-bench-fsat-")));
try {
  const deep = Array.from({ length: 12 }, (_, i) => `level${i}`).join("/");
  const file = `${deep}/file.ts`;
  await mkdir(join(root, deep), { recursive: true });
  await writeFile(join(root, file), "export const x = 1;\n".repeat(100));
  for (let a = 0; a < 3; a++)
    for (let b = 0; b < 10; b++) {
      const d = join(root, "tree", `a${a}`, `b${b}`);
      await mkdir(d, { recursive: true });
      for (let f = 0; f < 10; f++) await writeFile(join(d, `f${f}.ts`), "x\n");
    }

  const ws = await Workspace.open(root, { watch: false });
  const ctx = opContext(ws);

  // By name, as before: realpath of the parent, lstat, stat, then an open of the whole path.
  const byNameRead = async () => {
    const abs = join(await realpath(dirname(join(root, file))), "file.ts");
    await lstat(abs);
    if ((await stat(abs)).isFile()) await readFile(abs);
  };
  const byNameList = async () => {
    const walk = async (rel: string): Promise<void> => {
      await readFile(join(root, rel, ".gitignore")).catch(() => null);
      for (const e of await readdir(join(root, rel), { withFileTypes: true }))
        if (e.isDirectory()) await walk(`${rel}/${e.name}`);
    };
    await realpath(join(root, "tree"));
    await walk("tree");
  };

  const readNow = await perCall(2000, () => readFileOp.run({ path: file }, ctx));
  const readBefore = await perCall(2000, byNameRead);
  const listNow = await perCall(200, () => listFilesOp.run({ path: "tree" }, ctx));
  const listBefore = await perCall(200, byNameList);
  const walkOnly = await perCall(5000, async () => ws.files.walk(file).close());
  const realpathOnly = await perCall(5000, () => realpath(join(root, file)));

  printTable(
    "confinement by descriptor (µs per call, fastest of 5 rounds)",
    ["case", "by descriptor", "by name", "ratio"],
    [
      ["read_file, 12 folders deep", readNow.toFixed(1), readBefore.toFixed(1), ratio(readNow, readBefore)],
      ["list_files, 3 levels, 300 files", listNow.toFixed(1), listBefore.toFixed(1), ratio(listNow, listBefore)],
      ["resolve only (walk vs realpath)", walkOnly.toFixed(1), realpathOnly.toFixed(1), ratio(walkOnly, realpathOnly)],
    ],
  );
  goal(
    "read_file within 3x of the by-name read",
    readNow < 3 * readBefore,
    `${readNow.toFixed(1)} µs vs ${readBefore.toFixed(1)} µs`,
  );
  goal(
    "list_files within 2x of the by-name listing",
    listNow < 2 * listBefore,
    `${listNow.toFixed(1)} µs vs ${listBefore.toFixed(1)} µs`,
  );
  ws.dispose();
} finally {
  await rm(root, { recursive: true, force: true });
}
