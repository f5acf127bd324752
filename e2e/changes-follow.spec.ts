// An open diff follows the workspace: a commit with the diff open closes it (no change left),
// and a diff whose file was committed meanwhile (here from outside the IDE, as a terminal's
// `git commit` would) compares with the new HEAD, so Discard puts back the committed text, never
// the older one the diff first showed.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("a diff closes when its change is committed, and Discard after a commit restores the committed text", async ({
  page,
}) => {
  const dir = workspaceDir();
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });
  const file = "follow/doc.txt";
  writeWorkspaceFile(file, "hello teh world\nline2\n");
  git("init", "-q", "-b", "main");
  git("config", "user.name", "E2E");
  git("config", "user.email", "e2e@example.com");
  git("add", "-A");
  git("commit", "-qm", "start");
  try {
    writeWorkspaceFile(file, "hello the world\nline2\n");
    await openNewSession(page);
    await page.keyboard.press("Control+Shift+G");
    const item = page.locator(`[data-testid="change-item"][data-path="${file}"]`);
    await item.click();
    const diff = page.getByTestId("change-diff");
    await expect(diff.locator(".original .view-lines:not(.line-delete)")).toContainText("hello teh world");
    await expect(diff.locator(".modified .view-lines:not(.line-delete)")).toContainText("hello the world");

    // Committed from the Changes tab with the diff open: no change is left, the diff goes.
    await page.getByTestId("commit-message").fill("fix the typo");
    await page.getByTestId("commit-message").press("Control+Enter");
    await expect(page.getByTestId("commit-done")).toBeVisible();
    await expect(page.getByTestId("change-item")).toHaveCount(0);
    await expect(diff).toHaveCount(0);

    // A new change, its diff open, then a commit the IDE did not make, then one more edit.
    writeWorkspaceFile(file, "hello the world\nline2 changed\n");
    await expect(item).toBeVisible();
    await item.click();
    await expect(diff.locator(".original .view-lines:not(.line-delete)")).toContainText("hello the world");
    await expect(diff.locator(".modified .view-lines:not(.line-delete)")).toContainText("line2 changed");
    git("commit", "-qam", "change line2");
    writeWorkspaceFile(file, "hello the world\nline2 changed\nline3\n");
    // The diff now compares with the new HEAD.
    await expect(diff.locator(".original .view-lines:not(.line-delete)")).toContainText("line2 changed");
    await expect(diff.locator(".modified .view-lines:not(.line-delete)")).toContainText("line3");

    page.once("dialog", (d) => d.accept());
    await diff.getByTestId("change-discard").click();
    await expect(item).toHaveCount(0);
    expect(readFileSync(join(dir, file), "utf8")).toBe("hello the world\nline2 changed\n");
    expect(git("status", "--porcelain").trim()).toBe("");

    // Committed behind an open diff with nothing changed after: Discard finds no change left
    // and only closes the diff.
    writeWorkspaceFile(file, "hello the world\nline2 changed\nlast\n");
    await expect(item).toBeVisible();
    await item.click();
    await expect(diff.locator(".modified .view-lines:not(.line-delete)")).toContainText("last");
    git("commit", "-qam", "last line");
    page.once("dialog", (d) => d.accept());
    await diff.getByTestId("change-discard").click();
    await expect(diff).toHaveCount(0);
    expect(readFileSync(join(dir, file), "utf8")).toBe("hello the world\nline2 changed\nlast\n");
    expect(git("status", "--porcelain").trim()).toBe("");
  } finally {
    rmSync(join(dir, ".git"), { recursive: true, force: true });
    rmSync(join(dir, "follow"), { recursive: true, force: true });
  }
});
