// The Changes tab in a git work tree: the branch, and a commit of everything from a message;
// the tree's marks of what is uncommitted, gone once committed.
// The e2e workspace is made a repository for this test only (its .git is removed after).
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("in a git work tree, the Changes tab names the branch and commits every change from a message", async ({
  page,
}) => {
  const dir = workspaceDir();
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });
  writeWorkspaceFile("committed/app.txt", "v1\n");
  git("init", "-q", "-b", "trunk");
  git("config", "user.name", "E2E");
  git("config", "user.email", "e2e@example.com");
  git("add", "-A");
  git("commit", "-qm", "start");
  try {
    writeWorkspaceFile("committed/app.txt", "v2\n");
    writeWorkspaceFile("committed/new.txt", "new\n");
    await openNewSession(page);
    // The tree marks what is uncommitted: the folder above the changes, then each file's kind.
    const mark = (path: string) =>
      page.locator(`[data-testid="tree-item"][data-path="${path}"] [data-testid="tree-mark"]`);
    await expect(mark("committed")).toHaveAttribute("data-mark", "•");
    await page.locator('[data-testid="tree-item"][data-path="committed"]').click();
    await expect(mark("committed/app.txt")).toHaveAttribute("data-mark", "M");
    await expect(mark("committed/new.txt")).toHaveAttribute("data-mark", "A");
    await shot(page, "tree-marks");
    await page.keyboard.press("Control+Shift+G");
    await expect(page.getByTestId("changes-against")).toHaveText("trunk · against HEAD");
    await expect(page.getByTestId("change-item")).toHaveCount(2);
    await expect(page.getByTestId("commit-button")).toHaveText("Commit 2 files");
    await expect(page.getByTestId("commit-button")).toBeDisabled();

    await page.getByTestId("commit-message").fill("Update the app\n\nand add a file");
    await shot(page, "changes-commit");
    await page.getByTestId("commit-message").press("Control+Enter");
    await expect(page.getByTestId("commit-done")).toHaveText(/^Committed [0-9a-f]+\.$/);
    await expect(page.getByTestId("change-item")).toHaveCount(0);
    await expect(page.getByTestId("commit-message")).toHaveValue("");
    expect(git("log", "-1", "--format=%s|%b").trim()).toBe("Update the app|and add a file");
    expect(git("status", "--porcelain").trim()).toBe("");
    await expect(page.locator('[data-testid="file-tree"] [data-testid="tree-mark"]')).toHaveCount(0);
    // Many changes: the tab's badge is capped, and the tab names keep their room.
    for (let i = 0; i < 120; i++) writeWorkspaceFile(`committed/many/f${i}.txt`, `${i}\n`);
    await page.getByTestId("changes-panel").getByRole("button", { name: "Refresh changes" }).click();
    await expect(page.getByTestId("side-changes")).toHaveText("Changes99+");
    for (const tab of ["side-files", "side-search", "side-changes"]) {
      expect(await page.getByTestId(tab).evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    }
    rmSync(join(dir, "committed/many"), { recursive: true, force: true });
    await page.getByTestId("changes-panel").getByRole("button", { name: "Refresh changes" }).click();
    await expect(page.getByTestId("change-item")).toHaveCount(0);

    // Nothing left to commit: the button says so by being off.
    await page.getByTestId("commit-message").fill("again");
    await expect(page.getByTestId("commit-button")).toHaveText("Commit");
    await expect(page.getByTestId("commit-button")).toBeDisabled();
  } finally {
    rmSync(join(dir, ".git"), { recursive: true, force: true });
  }
});
