// Checkpoints in the browser (issue #27): the agent edits, creates and deletes files (by its file
// tools and by shell) over three turns; the person restores the files to before turn 2 from the
// message's menu through the preview, sees the files on disk and in the tree, undoes it; rewinds
// the conversation (the next model request holds only what came before, the rewound turns stay
// shown and marked after a reload). Then the per-hunk review: on a file with three changed places
// Revert undoes exactly one on disk and in the open editor, Accept marks another reviewed.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { call, expect, openNewSession, say, send, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

const read = (rel: string) => readFileSync(join(workspaceDir(), rel), "utf8");
const exists = (rel: string) => existsSync(join(workspaceDir(), rel));
const treeItem = (page: Page, path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);

/** Sends a message and approves what the agent asks (for the session) until its answer `done` shows. */
async function turn(page: Page, text: string, done: string): Promise<void> {
  await send(page, text);
  const pending = page.locator('[data-testid="approval-card"][data-state="pending"]');
  const final = page.getByTestId("msg-assistant").filter({ hasText: done });
  await expect(async () => {
    if (await pending.count()) await pending.first().getByTestId("approve-session").click({ timeout: 2_000 });
    await expect(final).toBeVisible({ timeout: 500 });
  }).toPass({ timeout: 30_000 });
  await expect(page.getByTestId("send")).toBeVisible();
}

/** The text of every message in the model's latest request. */
function lastRequest(model: { provider: { requests: { body: Record<string, unknown> }[] } }): string {
  return JSON.stringify(model.provider.requests.at(-1)?.body.messages ?? []);
}

test("restore files to before a turn with a preview, undo it, rewind the conversation (kept after a reload)", async ({
  page,
  model,
}) => {
  test.setTimeout(120_000);
  writeWorkspaceFile("cp-a.txt", "a1\n");
  writeWorkspaceFile("cp-gone.txt", "bye\n");
  await openNewSession(page);

  // Edits need a read first (the read-before-edit ledger).
  model.script(
    call("read_file", { path: "cp-a.txt" }),
    call("write_file", { path: "cp-new1.txt", content: "one\n" }),
    call("edit_file", { path: "cp-a.txt", old_string: "a1", new_string: "a2" }),
    say("Turn one done."),
  );
  await turn(page, "first: make a2 and new1", "Turn one done.");
  model.script(
    call("edit_file", { path: "cp-a.txt", old_string: "a2", new_string: "a3" }),
    call("write_file", { path: "cp-b.txt", content: "bee\n" }),
    call("shell", { command: "rm cp-gone.txt" }),
    say("Turn two done."),
  );
  await turn(page, "second: a3, b, remove gone", "Turn two done.");
  model.script(
    call("edit_file", { path: "cp-new1.txt", old_string: "one", new_string: "ONE" }),
    say("Turn three done."),
  );
  await turn(page, "third: shout new1", "Turn three done.");
  expect([read("cp-a.txt"), read("cp-b.txt"), exists("cp-gone.txt"), read("cp-new1.txt")]).toEqual([
    "a3\n",
    "bee\n",
    false,
    "ONE\n",
  ]);
  // Each turn that changed files says so, with its review and undo.
  await expect(page.getByTestId("turn-review")).toHaveCount(3);

  // Restore files to before turn 2: the preview lists what changes, nothing changes yet.
  await page.getByTestId("turn-menu").nth(1).click();
  await page.getByTestId("rewind-files").click();
  const preview = page.getByTestId("rewind-preview");
  await expect(preview.getByTestId("rewind-keep-user-edits")).toBeChecked();
  const row = (path: string) => preview.locator(`[data-testid="rewind-change"][data-path="${path}"]`);
  await expect(row("cp-a.txt")).toHaveAttribute("data-change", "restore");
  await expect(row("cp-a.txt")).toContainText("+1 −1");
  await expect(row("cp-b.txt")).toHaveAttribute("data-change", "delete");
  await expect(row("cp-gone.txt")).toHaveAttribute("data-change", "recreate");
  await expect(row("cp-new1.txt")).toHaveAttribute("data-change", "restore");
  expect(read("cp-a.txt")).toBe("a3\n");
  await preview.getByTestId("rewind-confirm").click();
  await expect(preview).toBeHidden();
  await expect
    .poll(() => [
      read("cp-a.txt"),
      exists("cp-b.txt"),
      exists("cp-gone.txt") && read("cp-gone.txt"),
      read("cp-new1.txt"),
    ])
    .toEqual(["a2\n", false, "bye\n", "one\n"]);
  await expect(treeItem(page, "cp-b.txt")).toHaveCount(0);
  await expect(treeItem(page, "cp-gone.txt")).toBeVisible();
  // A files restore leaves the conversation as it was.
  await expect(page.locator('[data-rewound="true"]')).toHaveCount(0);

  // Undo puts the files back as they were before the restore.
  await page.getByTestId("rewind-undo").click();
  await expect(page.getByTestId("rewind-bar")).toBeHidden();
  await expect
    .poll(() => [read("cp-a.txt"), exists("cp-b.txt") && read("cp-b.txt"), exists("cp-gone.txt"), read("cp-new1.txt")])
    .toEqual(["a3\n", "bee\n", false, "ONE\n"]);
  await expect(treeItem(page, "cp-b.txt")).toBeVisible();
  await expect(treeItem(page, "cp-gone.txt")).toHaveCount(0);

  // Rewind the conversation to turn 2: its message goes back in the box, turns 2 and 3 are marked.
  await page.getByTestId("turn-menu").nth(1).click();
  await page.getByTestId("rewind-conversation").click();
  await expect(preview).toContainText("2 turns");
  await preview.getByTestId("rewind-confirm").click();
  await expect(page.getByTestId("composer")).toHaveValue("second: a3, b, remove gone");
  const rewound = page.locator('[data-rewound="true"] [data-testid="msg-user"]');
  await expect(rewound).toHaveText(["second: a3, b, remove gone", "third: shout new1"]);
  await expect(
    page.locator('[data-testid="msg-user"]').first().locator("xpath=ancestor::*[@data-rewound]"),
  ).toHaveCount(0);
  // The files stay as they are: only the conversation went back.
  expect(read("cp-a.txt")).toBe("a3\n");

  // The next request holds turn 1 and the new message, nothing of turns 2 and 3.
  model.script(say("Fresh answer."));
  await page.getByTestId("composer").fill("instead: do nothing");
  await page.getByTestId("composer").press("Enter");
  await expect(page.getByTestId("msg-assistant").filter({ hasText: "Fresh answer." })).toBeVisible();
  const sent = lastRequest(model);
  expect(sent).toContain("first: make a2 and new1");
  expect(sent).toContain("instead: do nothing");
  expect(sent).not.toContain("second: a3");
  expect(sent).not.toContain("third: shout");
  expect(sent).not.toContain("Turn two done.");

  // After a reload the rewound turns are still shown, still marked; the new one is not.
  await page.reload();
  await expect(page.getByTestId("msg-user")).toHaveCount(4);
  await expect(rewound).toHaveText(["second: a3, b, remove gone", "third: shout new1"]);
  await expect(page.locator('[data-rewound="true"]').filter({ hasText: "Fresh answer." })).toHaveCount(0);
});

test("per-hunk review: Revert undoes exactly one hunk on disk and in the open editor, Accept marks another reviewed", async ({
  page,
  model,
}) => {
  test.setTimeout(90_000);
  const lines = (at: Record<number, string> = {}) =>
    Array.from({ length: 40 }, (_, i) => at[i + 1] ?? `const h${i + 1} = ${i + 1};`).join("\n") + "\n";
  writeWorkspaceFile("hunks.ts", lines());
  await openNewSession(page);
  await treeItem(page, "hunks.ts").click();
  const editor = page.getByTestId("code-editor").locator(".view-lines");
  await expect(editor).toContainText("const h1 = 1;");

  model.script(
    call("read_file", { path: "hunks.ts" }),
    call("edit_file", { path: "hunks.ts", old_string: "const h5 = 5;", new_string: "const h5 = 500;" }),
    call("edit_file", { path: "hunks.ts", old_string: "const h20 = 20;", new_string: "const h20 = 2000;" }),
    call("edit_file", { path: "hunks.ts", old_string: "const h35 = 35;", new_string: "const h35 = 3500;" }),
    say("Three places changed."),
  );
  await turn(page, "change h5, h20 and h35", "Three places changed.");
  expect(read("hunks.ts")).toBe(lines({ 5: "const h5 = 500;", 20: "const h20 = 2000;", 35: "const h35 = 3500;" }));

  // One click to the turn's changes, one to revert a hunk.
  await page.getByTestId("turn-review").click();
  const view = page.getByTestId("agent-changes");
  const file = view.locator('[data-testid="agent-change-file"][data-path="hunks.ts"]');
  const hunks = file.getByTestId("agent-hunk");
  await expect(hunks).toHaveCount(3);
  await expect(hunks.nth(1)).toContainText("+const h20 = 2000;");
  await expect(hunks.nth(1)).toHaveAttribute("data-state", "open");
  await hunks.nth(1).getByTestId("hunk-revert").click();
  await expect(hunks.nth(1)).toHaveAttribute("data-state", "reverted");
  await expect.poll(() => read("hunks.ts")).toBe(lines({ 5: "const h5 = 500;", 35: "const h35 = 3500;" }));

  await hunks.nth(0).getByTestId("hunk-accept").click();
  await expect(hunks.nth(0)).toHaveAttribute("data-state", "accepted");
  await expect(hunks.nth(2)).toHaveAttribute("data-state", "open");
  // Accept changes nothing on disk.
  expect(read("hunks.ts")).toBe(lines({ 5: "const h5 = 500;", 35: "const h35 = 3500;" }));

  // The open editor followed the revert.
  await page.getByTestId("agent-changes-close").click();
  await expect(editor).toContainText("const h20 = 20;");
  await expect(editor).toContainText("const h5 = 500;");
  await expect(editor).not.toContainText("2000");

  // The whole session's review (from the Changes tab) shows the states as well.
  await page.keyboard.press("Control+Shift+G");
  await page.getByTestId("agent-changes-open").click();
  await expect(view).toHaveAttribute("data-turn", "");
  await expect(view.locator('[data-testid="agent-change-file"][data-path="hunks.ts"]')).toBeVisible();
});
