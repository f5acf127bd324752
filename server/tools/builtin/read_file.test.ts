// read_file through the pool on a real runner: numbering, offset/limit, bounds, and every
// confinement case (../, absolute elsewhere, /ws vs /ws-evil, symlinks out).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { readFileTool } from "./read_file";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
});
afterAll(async () => {
  await h?.close();
  await rm(`${h.dir}-evil`, { recursive: true, force: true });
});

describe("read_file", () => {
  it("numbers lines and pages with offset/limit, with a continuation marker", async () => {
    await writeFile(`${h.dir}/five.txt`, "a\nb\nc\nd\ne\n");
    const all = await h.call(readFileTool, { path: "five.txt" });
    expect(all.output).toBe(["     1\ta", "     2\tb", "     3\tc", "     4\td", "     5\te"].join("\n"));
    const page = await h.call(readFileTool, { path: "five.txt", offset: 2, limit: 2 });
    expect(page.output).toBe("     2\tb\n     3\tc\n[showing lines 2-3 of 5; continue with offset=4]");
    const past = await h.call(readFileTool, { path: "five.txt", offset: 9 });
    expect(past.error).toBe("offset 9 is past the end of five.txt, which has 5 lines");
  });

  it("bounds long lines and big files with clear markers, refuses binaries and directories", async () => {
    await writeFile(`${h.dir}/long.txt`, `${"x".repeat(5000)}\nshort\n`);
    const long = await h.call(readFileTool, { path: "long.txt" });
    expect(long.output).toContain("… [line cut: 5000 characters]");
    await writeFile(`${h.dir}/big.txt`, Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n"));
    const big = await h.call(readFileTool, { path: "big.txt" });
    expect(big.output.split("\n")).toHaveLength(2001);
    expect(big.output).toMatch(/\[showing lines 1-2000 of 3000; continue with offset=2001\]$/);
    await writeFile(`${h.dir}/bin.dat`, Buffer.from([1, 0, 2, 3]));
    expect((await h.call(readFileTool, { path: "bin.dat" })).error).toMatch(/binary file/);
    await mkdir(`${h.dir}/sub`, { recursive: true });
    expect((await h.call(readFileTool, { path: "sub" })).error).toMatch(/is a directory; use list_files/);
    expect((await h.call(readFileTool, { path: "missing.txt" })).error).toBe("missing.txt does not exist");
  });

  it("refuses every path that leaves the workspace", async () => {
    await mkdir(`${h.dir}-evil`, { recursive: true });
    await writeFile(`${h.dir}-evil/secret.txt`, "sibling secret\n");
    await symlink("/etc", `${h.dir}/etc-link`);
    await symlink("/etc/hostname", `${h.dir}/host-link`);
    await symlink(`${h.dir}-evil/secret.txt`, `${h.dir}/sibling-link`);
    const cases: Array<[string, RegExp]> = [
      ["../x", /outside the workspace/],
      ["sub/../../x", /outside the workspace/],
      ["/etc/passwd", /outside the workspace/],
      [`${h.dir}-evil/secret.txt`, /outside the workspace/],
      [`../${h.dir.split("/").pop()}-evil/secret.txt`, /outside the workspace/],
      ["etc-link/passwd", /outside the workspace through a symlink/],
      ["host-link", /symbolic link pointing outside the workspace/],
      ["sibling-link", /symbolic link pointing outside the workspace/],
    ];
    for (const [path, why] of cases) {
      const r = await h.call(readFileTool, { path });
      expect(r.error, path).toMatch(why);
      expect(r.output, path).toBe("");
    }
    // Absolute paths inside the workspace and links staying inside are fine.
    await writeFile(`${h.dir}/inside.txt`, "ok\n");
    await symlink(`${h.dir}/inside.txt`, `${h.dir}/inside-link`);
    expect((await h.call(readFileTool, { path: `${h.dir}/inside.txt` })).output).toBe("     1\tok");
    expect((await h.call(readFileTool, { path: "inside-link" })).output).toBe("     1\tok");
  });
});
