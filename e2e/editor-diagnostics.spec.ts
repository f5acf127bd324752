// Monaco's TypeScript service sees only the open files: errors that only say it cannot see the
// rest of the project (an unopened file it imports) are not shown, and a real mistake in the file
// still is. The runner's language server, which sees the whole workspace, marks the same line and
// nothing else (the imported file exists there).
import { expect, openNewSession, test, writeWorkspaceFile } from "./fixtures";

test("a TypeScript file shows its own type error, not the project it cannot see", async ({ page }) => {
  writeWorkspaceFile("diag/not-open.ts", "export function helper(): number {\n  return 1;\n}\n");
  writeWorkspaceFile(
    "diag/check.ts",
    [
      'import { helper } from "./not-open";',
      "export const size: number = helper();",
      'export const wrong: number = "text";',
      "",
    ].join("\n"),
  );
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="diag"]').click();
  await page.locator('[data-testid="tree-item"][data-path="diag/check.ts"]').click();
  const editor = page.locator(".monaco-editor").first();
  await expect(editor.locator(".view-lines")).toContainText("export const wrong");
  // The one real error, under line 3, and nothing under the import of the unopened file.
  await expect(editor.locator(".squiggly-error").first()).toBeVisible({ timeout: 15_000 });
  await page.waitForTimeout(3000);
  const line3 = (await editor.locator(".view-line").nth(2).boundingBox())!;
  const squiggles = await editor.locator(".squiggly-error").all();
  expect(squiggles.length).toBeGreaterThan(0);
  for (const squiggle of squiggles)
    expect(Math.abs((await squiggle.boundingBox())!.y - line3.y)).toBeLessThan(line3.height);
});
