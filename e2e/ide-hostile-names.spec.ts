// A file's name is the agent's to choose: a newline in it made `x\n.env` pass for a second line,
// `.env`, and a text-direction override reversed what followed it. In real Chromium, the tree, the
// editor tab and the delete dialog (a plain confirm(), which shows a string as it is) each show
// such a name as itself, its hidden characters as marks.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("a name the agent chose reads as itself in the tree, its tab and the delete dialog", async ({ page }) => {
  // A newline made `x\n.env` pass for a second line, `.env`; an override reverses what follows it.
  const names = ["hostile-names/x\n.env", "hostile-names/rtl\u202etxt.exe"];
  for (const name of names) writeWorkspaceFile(name, "kept\n");
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="hostile-names"]').click();
  const marked = page.getByTestId("tree-item").filter({ hasText: "rtl⟨U+202E⟩txt.exe" });
  await expect(page.getByTestId("tree-item").filter({ hasText: "x⟨U+000A⟩.env" })).toHaveCount(1);
  await marked.click();
  await expect(page.getByTestId("editor-tab").filter({ hasText: "rtl⟨U+202E⟩txt.exe" })).toBeVisible();
  const asked = new Promise<string>((resolve) => page.once("dialog", (d) => void (resolve(d.message()), d.dismiss())));
  await marked.click();
  await page.keyboard.press("Delete");
  expect(await asked).toBe("Delete hostile-names/rtl⟨U+202E⟩txt.exe? This cannot be undone.");
  const newline = page.getByTestId("tree-item").filter({ hasText: "x⟨U+000A⟩.env" });
  const askedAgain = new Promise<string>((resolve) =>
    page.once("dialog", (d) => void (resolve(d.message()), d.dismiss())),
  );
  await newline.click();
  await page.keyboard.press("Delete");
  expect(await askedAgain).toBe("Delete hostile-names/x⟨U+000A⟩.env? This cannot be undone.");
  // Dismissed: both files are still there.
  for (const name of names) expect(existsSync(join(workspaceDir(), name))).toBe(true);
});
