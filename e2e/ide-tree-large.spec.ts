// A workspace larger than one listing: the tree reads each folder the person opens on its own,
// and quick open looks through the whole workspace, so a file the capped, breadth-first listing
// never reached can still be found and opened.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("past the listing's cap: quick open finds a file, the tree reads the folders it opens, a too-wide folder says so", async ({
  page,
}) => {
  // 5,100 files in one folder: the listing (5,000 entries, breadth first) stops inside it, before
  // it reaches the third level of deep/.
  for (let i = 0; i < 5100; i++) writeWorkspaceFile(`wide/f${String(i).padStart(4, "0")}.txt`, "");
  writeWorkspaceFile("deep/l1/l2/target.ts", "export const found = true;\n");
  writeWorkspaceFile("deep/l1/l2/other.ts", "export const other = 1;\n");
  try {
    await openNewSession(page);
    const item = (path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
    await page.getByTestId("pane-editor").click();
    await page.keyboard.press("Control+p");
    await page.getByTestId("quick-open").locator("input").fill("l2target");
    await expect(page.getByTestId("quick-item").first()).toHaveText("deep/l1/l2/target.ts");
    await page.keyboard.press("Enter");
    await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("export const found");
    // The explorer reveals it: its folders, which the listing never reached, are read as they open.
    await expect(item("deep/l1/l2/target.ts")).toBeVisible();
    await item("deep/l1/l2/other.ts").click();
    await expect(page.locator('[data-testid="editor-tab"][data-path="deep/l1/l2/other.ts"]')).toBeVisible();

    await expect(page.getByTestId("tree-cut")).toHaveCount(0);
    await item("wide").click();
    await expect(item("wide/f0000.txt")).toBeVisible();
    await expect(page.getByTestId("tree-cut")).toContainText("wide/ has more entries than the tree lists");
  } finally {
    rmSync(join(workspaceDir(), "wide"), { recursive: true, force: true });
    rmSync(join(workspaceDir(), "deep"), { recursive: true, force: true });
  }
});
