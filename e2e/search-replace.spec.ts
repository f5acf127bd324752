// Replace in files from the search panel: Replace All asks first, replaces in the listed files,
// says what it did, the results follow, and an open file shows the new text.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("Replace All: asks, replaces line by line in the listed files, and the results and the open file follow", async ({
  page,
}) => {
  writeWorkspaceFile("rep/a.ts", "const oldThing = 1;\nexport { oldThing };\n");
  writeWorkspaceFile("rep/b.md", "The oldThing is documented.\n");
  writeWorkspaceFile("rep/c.txt", "unrelated\n");
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="rep"]').click();
  await page.locator('[data-testid="tree-item"][data-path="rep/a.ts"]').click();
  await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("const oldThing = 1;");

  // Ctrl+Shift+H: search, with Replace open.
  await page.keyboard.press("Control+Shift+H");
  await expect(page.getByTestId("search-replace-toggle")).toHaveAttribute("aria-pressed", "true");
  await page.getByTestId("search-query").fill("oldthing");
  await page.getByTestId("search-glob").fill("rep/**");
  await expect(page.getByTestId("search-summary")).toHaveText("3 results in 2 files");
  await page.getByTestId("replace-with").fill("newThing");

  // Dismissed: nothing changes.
  page.once("dialog", (d) => d.dismiss());
  await page.getByTestId("replace-all").click();
  expect(readFileSync(join(workspaceDir(), "rep/a.ts"), "utf8")).toContain("oldThing");

  let asked = "";
  page.once("dialog", (d) => ((asked = d.message()), d.accept()));
  await page.getByTestId("replace-with").press("Enter");
  await expect(page.getByTestId("replace-done")).toHaveText("Replaced 3 matches in 2 files.");
  expect(asked).toContain('Replace 3 matching lines in 2 files with "newThing"?');
  expect(readFileSync(join(workspaceDir(), "rep/a.ts"), "utf8")).toBe("const newThing = 1;\nexport { newThing };\n");
  expect(readFileSync(join(workspaceDir(), "rep/b.md"), "utf8")).toBe("The newThing is documented.\n");
  await expect(page.getByTestId("search-summary")).toHaveText("No results.");
  await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("const newThing = 1;");
  await shot(page, "search-replace");
});
