// The command palette (Ctrl+Shift+P): the IDE's commands by name, ':' for a line, and the file
// commands that act on the open file through the tree's name box.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("the command palette runs the IDE's commands, and ':' in quick open goes to a line", async ({ page }) => {
  writeWorkspaceFile("palette/long.txt", Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
  await openNewSession(page);
  await page.getByTestId("pane-editor").click();
  const box = page.getByTestId("quick-open");
  const items = box.getByTestId("quick-item");
  await page.keyboard.press("Control+Shift+P");
  await expect(box).toHaveAttribute("data-mode", "commands");
  await expect(box.locator("input")).toHaveValue(">");
  // No file is open: nothing to save, no line to go to.
  await page.keyboard.type("save");
  await expect(items.first()).toBeVisible();
  await expect(items.filter({ hasText: "File: Save" })).toHaveCount(0);
  await box.locator("input").fill(">zzzz");
  await expect(box).toContainText("No matching commands");
  await box.locator("input").fill(">toggle prev");
  await expect(items).toHaveText(["View: Toggle PreviewCtrl+Alt+P"]);
  await page.keyboard.press("Enter");
  await expect(box).toHaveCount(0);
  await expect(page.getByTestId("pane-preview")).toBeVisible();

  await page.keyboard.press("Control+p");
  await box.locator("input").fill("long");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="palette/long.txt"]')).toBeVisible();
  await page.keyboard.press("Control+p");
  await box.locator("input").fill(":25");
  await expect(items).toHaveText(["Go to line 25"]);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("editor-position")).toHaveText("Ln 25, Col 1");

  await page.keyboard.press("Control+Shift+P");
  await page.keyboard.type("model");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("model-form")).toBeVisible();
  await shot(page, "command-palette-model");
});

test("the palette's file commands: a new file beside the open one, rename and delete the open file", async ({
  page,
}) => {
  writeWorkspaceFile("pfile/main.ts", "export {};\n");
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="pfile"]').click();
  await page.locator('[data-testid="tree-item"][data-path="pfile/main.ts"]').click();
  const box = page.getByTestId("quick-open");
  const run = async (command: string) => {
    await page.keyboard.press("Control+Shift+P");
    await box.locator("input").fill(`>${command}`);
    await page.keyboard.press("Enter");
  };

  await run("new file");
  const name = page.getByTestId("tree-name-input");
  await expect(name).toBeFocused();
  await page.keyboard.type("util.ts");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="pfile/util.ts"]')).toBeVisible();
  expect(existsSync(join(workspaceDir(), "pfile/util.ts"))).toBe(true);

  await run("rename this");
  await expect(name).toBeFocused();
  await name.fill("helpers.ts");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="pfile/helpers.ts"]')).toBeVisible();
  expect(existsSync(join(workspaceDir(), "pfile/util.ts"))).toBe(false);

  page.once("dialog", (d) => d.accept());
  await run("delete this");
  await expect(page.locator('[data-testid="tree-item"][data-path="pfile/helpers.ts"]')).toHaveCount(0);
  expect(existsSync(join(workspaceDir(), "pfile/helpers.ts"))).toBe(false);
  expect(readFileSync(join(workspaceDir(), "pfile/main.ts"), "utf8")).toBe("export {};\n");
});
