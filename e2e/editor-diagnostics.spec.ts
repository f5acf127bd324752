// Monaco's TypeScript service sees only the open files: errors that only say it cannot see the
// rest of the project (packages, unopened files, Node's globals) are not shown, and a real
// mistake in the file still is.
import { expect, openNewSession, test, writeWorkspaceFile } from "./fixtures";

test("a TypeScript file shows its own type error, not the project it cannot see", async ({ page }) => {
  writeWorkspaceFile(
    "diag/check.ts",
    [
      'import { readFileSync } from "node:fs";',
      'import { helper } from "./not-open";',
      "export const size: number = readFileSync(process.argv[1]).length + helper();",
      'export const wrong: number = "text";',
      "",
    ].join("\n"),
  );
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="diag"]').click();
  await page.locator('[data-testid="tree-item"][data-path="diag/check.ts"]').click();
  const editor = page.locator(".monaco-editor").first();
  await expect(editor.locator(".view-lines")).toContainText("export const wrong");
  // The worker's answer: the one real error, under line 4.
  await expect(editor.locator(".squiggly-error")).toHaveCount(1, { timeout: 15_000 });
  await page.waitForTimeout(1000);
  await expect(editor.locator(".squiggly-error")).toHaveCount(1);
  const squiggle = await editor.locator(".squiggly-error").boundingBox();
  const line4 = await editor.locator(".view-line").nth(3).boundingBox();
  expect(Math.abs(squiggle!.y - line4!.y)).toBeLessThan(line4!.height);
});
