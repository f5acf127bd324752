import { describe, expect, it } from "vitest";
import { proposedDiff } from "./card";

describe("approval card diff", () => {
  it("shows an edit as a unified diff that starts at the file headers", () => {
    const diff = proposedDiff({ path: "src/a.ts", old_string: "let a = 1;", new_string: "const a = 2;" })!;
    expect(diff.split("\n").slice(0, 5)).toEqual(["--- a/src/a.ts", "+++ b/src/a.ts", "@@ -1,1 +1,1 @@", "-let a = 1;", "+const a = 2;"]);
  });

  it("shows a new file's whole content as added, and a given patch as it is", () => {
    expect(proposedDiff({ path: "n.txt", content: "one\ntwo" })).toMatch(/^--- \/dev\/null\n\+\+\+ b\/n.txt\n@@ -0,0 \+1,2 @@\n\+one\n\+two\n$/);
    expect(proposedDiff({ patch: "--- a/x\n+++ b/x\n" })).toBe("--- a/x\n+++ b/x\n");
    expect(proposedDiff({ command: "ls" })).toBeUndefined();
  });

  it("clips a huge change and says how much was left out", () => {
    const diff = proposedDiff({ path: "big.txt", content: "x".repeat(50_000) })!;
    expect(diff.length).toBeLessThan(21_000);
    expect(diff).toMatch(/… \(\d+ more characters\)$/);
  });
});
