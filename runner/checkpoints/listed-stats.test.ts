// listedStats on a real folder: a path is found only under real folders (a link the agent put in
// place of a folder, inside or out, is never followed; the link itself is stat'ed), folders deeper
// than the descriptors it keeps are read as well, names git never lists lead nowhere, and every
// descriptor it opened is closed again.
import { afterAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkspaceFs } from "../workspace/fs-at";
import { listedStats } from "./listed-stats";

const base = mkdtempSync(join(tmpdir(), "quiver-cp-stats-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const openFds = () => readdirSync("/proc/self/fd").length;

describe("listedStats", () => {
  it("finds files under real folders only, at any depth, and closes what it opened", async () => {
    const dir = join(base, "ws");
    const deep = Array.from({ length: 45 }, (_, i) => `d${i}`).join("/");
    mkdirSync(join(dir, "a", "b"), { recursive: true });
    mkdirSync(join(dir, deep), { recursive: true });
    mkdirSync(join(base, "outside"));
    writeFileSync(join(base, "outside", "secret"), "secret\n");
    writeFileSync(join(dir, "top.txt"), "top\n");
    writeFileSync(join(dir, "a", "b", "f"), "f\n");
    writeFileSync(join(dir, deep, "bottom.txt"), "bottom\n");
    writeFileSync(join(dir, "d0", "d1", "mid.txt"), "mid\n");
    symlinkSync("a", join(dir, "inside-link"));
    symlinkSync(join(base, "outside"), join(dir, "a", "out-link"));
    symlinkSync("f", join(dir, "a", "b", "file-link"));
    const files = WorkspaceFs.open(dir);
    try {
      const fds = openFds();
      const asked = [
        "top.txt",
        "a/b/f",
        `${deep}/bottom.txt`,
        "d0/d1/mid.txt",
        "a/b/file-link",
        "inside-link/b/f",
        "a/out-link/secret",
        "a/out-link",
        "a/b/f/under-a-file",
        "a/missing",
        "missing/x",
        "../ws/top.txt",
        "a/../top.txt",
        "a/./b/f",
      ];
      const stats = await listedStats(files, asked);
      expect(openFds()).toBe(fds);
      expect([...stats.keys()].sort()).toEqual(
        ["top.txt", "a/b/f", `${deep}/bottom.txt`, "d0/d1/mid.txt", "a/b/file-link", "a/out-link"].sort(),
      );
      expect(stats.get(`${deep}/bottom.txt`)?.size).toBe(7);
      expect(stats.get("a/b/file-link")?.isSymbolicLink()).toBe(true);
      expect(stats.get("a/out-link")?.isSymbolicLink()).toBe(true);
    } finally {
      files.close();
    }
  });
});
