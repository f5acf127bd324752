// The Changes tab: what the agent changed in the workspace, file by file, each with its diff
// against the earlier version, refreshed as the agent writes; Open takes the file to the editor,
// Discard puts the earlier version back.
// The e2e workspace is not a git work tree, so the diff is against the files as first seen.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { call, expect, openNewSession, say, send, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("the Changes tab lists what the agent changed and shows each file's diff", async ({ page, model }) => {
  const dir = `changes-${Date.now().toString(36)}`;
  writeWorkspaceFile(`${dir}/notes.txt`, "alpha\nbeta\ngamma\n");
  model.script(
    call("read_file", { path: `${dir}/notes.txt` }),
    call("edit_file", { path: `${dir}/notes.txt`, old_string: "beta", new_string: "BETA" }),
    call("write_file", { path: `${dir}/fresh.txt`, content: "one\ntwo\n" }),
    say("Edited one file and made another."),
  );
  await openNewSession(page);
  const item = (path: string) => page.locator(`[data-testid="change-item"][data-path="${path}"]`);
  await expect(item(`${dir}/notes.txt`)).toHaveCount(0);

  await send(page, "Edit the notes and add a file.");
  const pending = page.locator('[data-testid="approval-card"][data-state="pending"]');
  for (let i = 0; i < 2; i++) await pending.getByTestId("approve-once").click();
  await expect(page.getByTestId("msg-assistant").last()).toContainText("Edited one file");

  // The tab's badge counts them before it is opened; the list is refreshed by the agent's writes.
  await expect(page.getByTestId("side-changes")).toHaveText(/^Changes\d+$/);
  await page.getByTestId("side-changes").click();
  await expect(page.getByTestId("changes-panel")).toBeVisible();
  // The tabs fit the side bar with the badge: it does not scroll sideways when one takes focus.
  expect(await page.getByTestId("pane-files").evaluate((el) => el.scrollLeft)).toBe(0);
  await expect(item(`${dir}/notes.txt`)).toHaveAttribute("data-status", "modified");
  await expect(item(`${dir}/notes.txt`)).toContainText("+1 −1");
  await expect(item(`${dir}/fresh.txt`)).toHaveAttribute("data-status", "added");
  await expect(item(`${dir}/fresh.txt`)).toContainText("+2 −0");

  await item(`${dir}/notes.txt`).click();
  const diff = page.getByTestId("change-diff");
  await expect(diff).toHaveAttribute("data-path", `${dir}/notes.txt`);
  await expect(diff.locator(".original .view-lines:not(.line-delete)")).toContainText("beta");
  await expect(diff.locator(".modified .view-lines:not(.line-delete)")).toContainText("BETA");
  await shot(page, "changes-diff");

  // A new file against nothing.
  await item(`${dir}/fresh.txt`).click();
  await expect(diff).toHaveAttribute("data-path", `${dir}/fresh.txt`);
  await expect(diff.locator(".modified .view-lines:not(.line-delete)")).toContainText("two");

  await diff.getByTestId("change-open").click();
  await expect(page.getByTestId("change-diff")).toHaveCount(0);
  await expect(page.locator(`[data-testid="editor-tab"][data-path="${dir}/fresh.txt"]`)).toHaveAttribute(
    "aria-selected",
    "true",
  );
  await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("two");

  // Discard, after asking: the edited file gets its earlier text back, the new one goes.
  await item(`${dir}/notes.txt`).click();
  page.once("dialog", (d) => d.dismiss());
  await diff.getByTestId("change-discard").click();
  await expect(diff).toBeVisible();
  expect(readFileSync(join(workspaceDir(), dir, "notes.txt"), "utf8")).toBe("alpha\nBETA\ngamma\n");
  page.once("dialog", (d) => d.accept());
  await diff.getByTestId("change-discard").click();
  await expect(item(`${dir}/notes.txt`)).toHaveCount(0);
  expect(readFileSync(join(workspaceDir(), dir, "notes.txt"), "utf8")).toBe("alpha\nbeta\ngamma\n");
  await item(`${dir}/fresh.txt`).click();
  page.once("dialog", (d) => d.accept());
  await diff.getByTestId("change-discard").click();
  await expect(item(`${dir}/fresh.txt`)).toHaveCount(0);
  expect(existsSync(join(workspaceDir(), dir, "fresh.txt"))).toBe(false);
});
