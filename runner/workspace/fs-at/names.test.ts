import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GONE_NAME, RUNNER_NAME_GLOBS, STAGE_NAME, TEMP_NAME, goneName, stageName, tempName } from "./names";

const repo = mkdtempSync(join(tmpdir(), "quiver-names-"));
execFileSync("git", ["init", "-q", repo]);
mkdirSync(join(repo, ".git", "info"), { recursive: true });
writeFileSync(join(repo, ".git", "info", "exclude"), RUNNER_NAME_GLOBS.map((glob) => `${glob}\n`).join(""));
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/** The paths of `paths` that git, reading the shadow's globs, would leave out of a checkpoint. */
function ignored(paths: string[]): string[] {
  try {
    const out = execFileSync("git", ["-C", repo, "check-ignore", "--no-index", "-z", "--stdin"], {
      input: paths.join("\0"),
      encoding: "utf8",
    });
    return out.split("\0").filter(Boolean);
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

describe("the runner's own names: made, recognised and never recorded alike", () => {
  const made = [
    ...["a.txt", "x", "long".repeat(40), "sp ace"].flatMap((name) => [tempName(name, "tmp"), tempName(name, "lnk")]),
    `src/${tempName("main.ts", "tmp")}`,
    stageName(),
    goneName(),
  ];

  it("every name it makes matches the pattern the sweep removes", () => {
    for (const path of made) {
      const name = path.split("/").pop()!;
      expect(
        [TEMP_NAME, STAGE_NAME, GONE_NAME].some((pattern) => pattern.test(name)),
        name,
      ).toBe(true);
    }
  });

  it("every name it makes is left out of checkpoints by the shadow's globs", () => {
    expect(ignored(made).sort()).toEqual([...made].sort());
  });

  it("a person's look-alike names are neither swept nor left out", () => {
    const people = [
      "notes.tmp",
      ".quiver-restore-abc",
      "src/.quiver-restore-0123456789ab",
      ".a.quiver-0123456789AB.tmp",
      "a.quiver-0123456789ab.tmp",
      ".quiver-gone-0123456789ab0",
    ];
    expect(ignored(people)).toEqual([]);
    for (const path of people) {
      const name = path.split("/").pop()!;
      const atRoot = !path.includes("/");
      const swept = TEMP_NAME.test(name) || (atRoot && (STAGE_NAME.test(name) || GONE_NAME.test(name)));
      expect(swept, path).toBe(false);
    }
  });
});
