// Messages written while the agent works: queued above the message box, sent in order when the
// turn before completes, held after a turn that was stopped. Real server and pipeline, the fake
// provider streaming slowly enough to type during a turn.
import { expect, openNewSession, say, send, test } from "./fixtures";

test("messages written during a turn are sent one turn each, in order, when it completes", async ({ page, model }) => {
  // The first answer holds mid-stream until both messages are queued: a busy machine cannot end it early.
  model.script(
    say("Looking into the first request, which takes a while.", { pauseAfterBytes: 700 }),
    say("Second done."),
    say("Third done."),
  );
  await openNewSession(page);
  await send(page, "first");
  await expect(page.getByTestId("stop")).toBeVisible();
  const composer = page.getByTestId("composer");
  await composer.fill("second");
  await composer.press("Enter");
  await composer.fill("third");
  await composer.press("Enter");
  await expect(composer).toHaveValue("");
  await expect(page.getByTestId("queued-text")).toHaveText(["second", "third"]);
  model.provider.resume();
  await expect(page.getByTestId("msg-user")).toHaveText(["first", "second", "third"], { timeout: 30_000 });
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Third done.");
  await expect(page.getByTestId("message-queue")).toBeHidden();
  // Each went to the model as a turn of its own, after the answer to the one before.
  const lastRequest = JSON.stringify(model.provider.requests.at(-1)?.body);
  expect(lastRequest.indexOf("Second done.")).toBeLessThan(lastRequest.indexOf("third"));
});

test("after a stopped turn the queue waits; a message is sent or dropped by hand", async ({ page, model }) => {
  model.script(
    say("This answer never finishes streaming because the provider stalls.", { hangAfterBytes: 600 }),
    say("Sent by hand."),
  );
  await openNewSession(page);
  await send(page, "one");
  await expect(page.getByTestId("stop")).toBeVisible();
  const composer = page.getByTestId("composer");
  for (const text of ["two", "three"]) {
    await composer.fill(text);
    await composer.press("Enter");
  }
  await page.getByTestId("chat-log").click();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("turn-usage").last()).toContainText("cancelled");
  await expect(page.getByTestId("message-queue")).toContainText("Held");
  await page.waitForTimeout(500);
  await expect(page.getByTestId("msg-user")).toHaveText(["one"]);
  await page.getByTestId("queued-message").filter({ hasText: "two" }).getByTestId("queued-drop").click();
  await expect(page.getByTestId("queued-text")).toHaveText(["three"]);
  await page.getByTestId("queued-send").click();
  await expect(page.getByTestId("msg-user")).toHaveText(["one", "three"]);
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Sent by hand.");
  await expect(page.getByTestId("message-queue")).toBeHidden();
});
