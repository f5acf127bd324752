// Tool cards and accessibility, against the real server, runner and pipeline with the fake
// provider: a destructive command's card is used with the keyboard alone (Tab to its header,
// Enter closes and opens it, the approval answered from the keyboard), shows its elapsed time
// ticking and its output size while it runs, and the finished answer reaches the chat's polite
// live region; the Share dialog is modal, keeps Tab inside and gives focus back; Ctrl+F in the
// terminal finds text in its output.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import {
  call,
  card,
  expect,
  openNewSession,
  say,
  send,
  shot,
  test,
  workspaceDir,
  writeWorkspaceFile,
} from "./fixtures";

const focusedTestId = (page: Page) =>
  page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? document.activeElement?.tagName ?? "");

/** Presses Tab until the focused element has `testId`. */
async function tabTo(page: Page, testId: string, max = 30): Promise<void> {
  for (let i = 0; i < max; i++) {
    if ((await focusedTestId(page)) === testId) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached ${testId}; focus is on ${await focusedTestId(page)}`);
}

test("a destructive command's card, used with the keyboard alone: open/close, approve, elapsed time and output size, announced when done", async ({
  page,
  model,
}) => {
  const dir = `cards-${Date.now().toString(36)}`;
  writeWorkspaceFile(`${dir}/old/x.txt`, "x\n");
  model.script(
    call("shell", {
      command: `rm -rf ${dir}/old && for i in 1 2 3 4; do echo chunk-$i-$(printf 'y%.0s' $(seq 1 300)); sleep 1; done`,
    }),
    say("Removed the old folder and printed four chunks."),
  );
  await openNewSession(page);
  await send(page, "Clean up the old folder.");
  const shell = card(page, "shell");
  const pending = shell.locator('[data-testid="approval-card"][data-state="pending"]');
  await expect(pending).toBeVisible();
  await expect(shell).toHaveAttribute("data-destructive", "true");
  await expect(shell.getByTestId("tool-destructive-tag")).toHaveText("⚠ destructive");
  await expect(pending.getByTestId("approval-destructive")).toContainText(
    "⚠ Destructive command: it deletes files and folders",
  );
  // A command of several parts: the button points to the plain list of what it would allow.
  await expect(pending.getByTestId("approve-session")).toHaveText("Approve for this session (see below)");
  await expect(pending.getByTestId("approval-allows")).toContainText(`Allow exactly this command: rm -rf ${dir}/old`);
  await expect(pending.getByTestId("approval-allows")).toContainText(
    "Allow `sleep` with any arguments for this session",
  );

  // From the person's message (a starting point only: Shift+Tab in the composer cycles the
  // mode), forwards with Tab to the card's header toggle.
  await page
    .getByTestId("msg-user")
    .last()
    .evaluate((el) => (((el as HTMLElement).tabIndex = -1), (el as HTMLElement).focus()));
  await tabTo(page, "tool-toggle");
  const toggle = shell.getByTestId("tool-toggle");
  await expect(toggle).toBeFocused();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await page.keyboard.press("Enter");
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await page.keyboard.press("Space");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");

  // Tab on into the approval card and answer "once" with the keyboard. Its buttons are disabled
  // until the card is armed, and Tab passes over a disabled button: on a loaded machine the
  // arming can come after the Tabs.
  await expect(pending.getByTestId("approve-once")).toBeEnabled();
  await tabTo(page, "approve-once");
  await page.keyboard.press("Enter");
  await expect(shell).toHaveAttribute("data-status", "running");
  await expect(shell.getByTestId("tool-elapsed")).toBeVisible();
  const first = await shell.getByTestId("tool-elapsed").textContent();
  await expect(shell.getByTestId("tool-elapsed")).not.toHaveText(first!, { timeout: 5_000 });
  await expect(shell.getByTestId("tool-elapsed")).toHaveText(/^\d+ s$/);
  await expect(shell.getByTestId("tool-output-size")).toHaveText(/^\d+(\.\d)? (B|KB) output$/);
  await shot(page, "card-running-destructive");

  await expect(shell).toHaveAttribute("data-status", "succeeded", { timeout: 20_000 });
  await expect(shell.getByTestId("tool-elapsed")).toHaveCount(0);
  expect(existsSync(join(workspaceDir(), dir, "old"))).toBe(false);
  const live = page.getByTestId("chat-live");
  await expect(live).toHaveAttribute("aria-live", "polite");
  await expect(live).toHaveText("Agent: Removed the old folder and printed four chunks.");
});

test("the Share dialog is modal: focus moves in, Tab stays inside, Escape closes and focus returns to Share", async ({
  page,
}) => {
  await openNewSession(page);
  const open = page.getByTestId("share-open");
  await open.focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByTestId("share-dialog");
  await expect(dialog).toHaveAttribute("aria-modal", "true");
  await expect(dialog).toHaveAttribute("role", "dialog");
  expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="share-dialog"]'))).toBe(true);
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press(i % 3 === 2 ? "Shift+Tab" : "Tab");
    expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="share-dialog"]'))).toBe(true);
  }
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await expect(open).toBeFocused();
});

test("Ctrl+F in the terminal finds text in its output; Enter steps through matches, Escape closes", async ({
  page,
}) => {
  await openNewSession(page);
  const term = page.getByTestId("pane-terminal");
  await expect(term).toHaveAttribute("data-state", "open");
  await term.locator(".xterm").click();
  await page.keyboard.type("echo needle-one; echo hay; echo needle-two\n");
  await expect(term.locator(".xterm-rows:visible")).toContainText("needle-two");
  await page.keyboard.press("Control+f");
  const find = term.getByTestId("terminal-find");
  await expect(find).toBeVisible();
  await expect(find.getByTestId("terminal-find-input")).toBeFocused();
  await page.keyboard.type("needle-");
  // The command line itself and the two printed lines.
  await expect(find.getByTestId("terminal-find-count")).toHaveText(/^\d of [3-9]$/);
  const before = await find.getByTestId("terminal-find-count").textContent();
  await page.keyboard.press("Enter");
  await expect(find.getByTestId("terminal-find-count")).not.toHaveText(before!);
  await page.keyboard.press("Shift+Enter");
  await expect(find.getByTestId("terminal-find-count")).toHaveText(before!);
  await find.getByTestId("terminal-find-input").fill("no-such-text-here");
  await expect(find.getByTestId("terminal-find-count")).toHaveText("No results");
  await shot(page, "terminal-find");
  await page.keyboard.press("Escape");
  await expect(find).toHaveCount(0);
  expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="pane-terminal"]'))).toBe(true);
});
