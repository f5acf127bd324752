// A long session in the IDE: the context meter under the message box follows what the latest
// request filled, and once it passes 80% the next turn starts from a summary the chat shows
// folded under a divider. Real server, runner and pipeline; the fake provider's usage figures
// put the session near the window (fake-model: 200K tokens).
import { call, expect, openNewSession, say, send, shot, test, writeWorkspaceFile } from "./fixtures";

test("the context meter fills, and the next turn starts from a summary shown in the chat", async ({ page, model }) => {
  writeWorkspaceFile("notes.txt", "ship on friday\n");
  model.script(
    { ...call("read_file", { path: "notes.txt" }), usage: { input: 100, output: 10 } },
    say("The notes say to ship on Friday.", { usage: { input: 169_000, output: 1_000 } }),
    say("SUMMARY: the person had notes.txt read; it says ship on Friday.", { usage: { input: 170_000, output: 40 } }),
    say("Friday it is.", { usage: { input: 2_000, output: 10 } }),
  );
  await openNewSession(page);
  const meter = page.getByTestId("context-meter");
  await send(page, "What do the notes say?");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("ship on Friday");
  await expect(meter).toHaveText("85% of 200K");
  await expect(meter).toHaveAttribute("title", /170,000 of the model's 200,000-token context window/);
  // The turn's usage is its two requests together, not their running totals added up.
  await expect(page.getByTestId("turn-usage").last()).toContainText("169,100 in · 1,010 out");

  await send(page, "So when do we ship?");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("Friday it is.");
  const divider = page.getByTestId("compacted");
  await expect(divider).toContainText("Earlier conversation summarized");
  await expect(divider).toContainText("170,000 tokens");
  await expect(divider.getByText("SUMMARY: the person had notes.txt read")).toBeHidden();
  await divider.locator("summary").click();
  await expect(divider.getByText("SUMMARY: the person had notes.txt read")).toBeVisible();
  await expect(page.getByTestId("notice").filter({ hasText: "Summarizing it so the session can go on" })).toBeVisible();
  await expect(meter).toHaveText("1% of 200K");
  await shot(page, "context-compacted");

  // A reload rebuilds the same chat from the event log.
  await page.reload();
  await expect(page.getByTestId("compacted")).toContainText("Earlier conversation summarized");
  await expect(page.getByTestId("context-meter")).toHaveText("1% of 200K");

  // A click on the meter summarizes now: "/compact", a turn with no reply.
  model.script(say("SUMMARY 2: shipping Friday, confirmed.", { usage: { input: 3_000, output: 20 } }));
  await page.getByTestId("context-meter").click();
  await expect(page.getByTestId("msg-user").last()).toHaveText("/compact");
  await expect(page.getByTestId("compacted")).toHaveCount(2);
  await expect(page.getByTestId("notice").filter({ hasText: "Summarizing the conversation, as asked" })).toBeVisible();
  await expect(page.getByTestId("turn-usage").last()).toContainText("3,000 in · 20 out");
  await expect(page.getByTestId("context-meter")).toHaveText("0% of 200K");
});
