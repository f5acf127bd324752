// The person steering the agent, against the real server, runner and pipeline with the fake
// provider: "Approve for this session" lets the same kind of command run without a card (and
// only that kind), and the Stop button cancels a turn both while the answer streams and while an
// approved command runs.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { call, card, expect, openNewSession, say, send, shot, test, workspaceDir } from "./fixtures";

/** "w001 w002 …": a text in which any lost or repeated piece shows. */
const numbered = (n: number) => Array.from({ length: n }, (_, i) => `w${String(i + 1).padStart(3, "0")}`).join(" ");

test("Approve for this session: the same kind of command then runs without a card, another kind still asks", async ({
  page,
  model,
}) => {
  model.script(
    call("shell", { command: "touch session-1.txt" }),
    call("shell", { command: "touch session-2.txt" }),
    call("shell", { command: "mkdir session-dir" }),
    say("Two files and a folder."),
  );
  await openNewSession(page);
  await send(page, "Make two files and a folder.");
  const pending = page.locator('[data-testid="approval-card"][data-state="pending"]');
  await expect(pending).toHaveCount(1);
  await expect(pending.getByTestId("approval-command")).toHaveText("touch session-1.txt");
  await expect(pending.getByTestId("approve-session")).toHaveText("Allow `touch` with any arguments for this session");
  // The browser tab shows the waiting card, for a person looking at another tab.
  await expect(page).toHaveTitle("(1) Make two files and a folder. · Quiver");
  await shot(page, "approve-for-session");
  await pending.getByTestId("approve-session").click();

  const shells = page.locator('[data-testid="tool-card"][data-tool="shell"]');
  await expect(shells.nth(0)).toHaveAttribute("data-status", "succeeded");
  await expect(shells.nth(0).getByTestId("approval-card")).toHaveAttribute("data-state", "approved_session");
  // The second touch ran without asking: no card inside it, and the file exists.
  await expect(shells.nth(1)).toHaveAttribute("data-status", "succeeded");
  await expect(shells.nth(1).getByTestId("approval-card")).toHaveCount(0);
  await expect(shells.nth(1).getByTestId("approved-by")).toHaveText("session approval");
  await expect(shells.nth(0).getByTestId("approved-by")).toHaveCount(0);
  expect(existsSync(join(workspaceDir(), "session-2.txt"))).toBe(true);
  // mkdir is another command: the session approval does not cover it.
  await expect(pending).toHaveCount(1);
  await expect(pending.getByTestId("approval-command")).toHaveText("mkdir session-dir");
  await expect(shells.nth(2)).toHaveAttribute("data-status", "awaiting_approval");
  await pending.getByTestId("approve-once").click();
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Two files and a folder.");
  await expect(page).toHaveTitle("Make two files and a folder. · Quiver");
  expect(existsSync(join(workspaceDir(), "session-dir"))).toBe(true);
  await shot(page, "approved-for-session");

  // It holds for the session, not the turn: after a reload, a new turn's touch runs unasked too.
  model.script(call("shell", { command: "touch session-3.txt" }), say("One more."));
  await page.reload();
  await send(page, "And another file.");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("One more.");
  await expect(shells).toHaveCount(4);
  await expect(shells.nth(3)).toHaveAttribute("data-status", "succeeded");
  await expect(page.getByTestId("approval-card")).toHaveCount(2);
  expect(existsSync(join(workspaceDir(), "session-3.txt"))).toBe(true);
});

test("Stop cancels a running turn: mid-stream nothing more arrives (Retry sends it again), mid-command the process dies", async ({
  page,
  model,
}) => {
  const full = numbered(200);
  model.script(say(full, { deltaChars: 3, delayMs: 30 }));
  await openNewSession(page);
  await send(page, "Count slowly.");
  const answer = page.getByTestId("msg-assistant").last();
  await expect(answer).toContainText("w005");
  await shot(page, "turn-streaming");
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("stop")).toBeHidden();
  await expect(page.getByTestId("turn-usage").last()).toHaveText(/^cancelled · /);
  const cut = await answer.innerText();
  expect(full.startsWith(cut.trim())).toBe(true);
  expect(cut.trim().length).toBeLessThan(full.length);
  // The stream was stopped at the source, not just hidden: nothing more arrives.
  await page.waitForTimeout(1000);
  expect(await answer.innerText()).toBe(cut);
  await shot(page, "turn-stopped");

  // Retry sends the stopped turn's message again, as a new turn; then only a failed last turn offers it.
  model.script(say("Counted."));
  await page.getByTestId("retry-turn").click();
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Counted.");
  await expect(page.getByTestId("msg-user")).toHaveText(["Count slowly.", "Count slowly."]);
  await expect(page.getByTestId("retry-turn")).toHaveCount(0);

  // An approved command still running: Stop kills it before it gets to write its file.
  // Nothing is scripted after the call: a turn that went on would show the unscripted reply.
  model.script(call("shell", { command: "sleep 3 && touch too-late.txt" }));
  await send(page, "Run the slow command.");
  await page.locator('[data-testid="approval-card"][data-state="pending"]').getByTestId("approve-once").click();
  await expect(card(page, "shell")).toHaveAttribute("data-status", "running");
  await page.getByTestId("stop").click();
  await expect(card(page, "shell")).toHaveAttribute("data-status", "cancelled");
  await expect(page.getByTestId("turn-usage").last()).toContainText("cancelled");
  await page.waitForTimeout(4000);
  expect(existsSync(join(workspaceDir(), "too-late.txt"))).toBe(false);
  await expect(page.getByText("(unscripted reply)")).toHaveCount(0);

  // The session is usable again at once.
  model.script(say("Ready again."));
  await send(page, "Still there?");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Ready again.");
  await expect(page.getByTestId("turn-usage")).toHaveCount(4);
});
