// Messages written while the agent works: queued above the message box, sent in order when the
// turn before completes, held after a turn that was stopped. Real server and pipeline, the fake
// provider streaming slowly enough to type during a turn.
import type { Page, WebSocketRoute } from "@playwright/test";
import { expect, openNewSession, say, send, test } from "./fixtures";

/** Holds what the server sends on the page's event socket while `hold` is on, and delivers it,
 *  in order, on `release()`: the page sees a turn start late. Set up before the page loads. */
async function eventsOnHold(page: Page) {
  let held: (string | Buffer)[] | null = null;
  const pages = new Set<WebSocketRoute>();
  await page.routeWebSocket(
    (url) => url.pathname === "/api/trpc",
    (ws) => {
      const server = ws.connectToServer();
      pages.add(ws);
      ws.onMessage((m) => server.send(m));
      server.onMessage((m) => (held ? held.push(m) : ws.send(m)));
    },
  );
  return {
    hold: () => void (held ??= []),
    release() {
      const out = held ?? [];
      held = null;
      for (const m of out) for (const ws of pages) ws.send(m);
    },
  };
}

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

test("a message typed before the server has answered the first send is queued, not wiped by that answer", async ({
  page,
  model,
}) => {
  model.script(
    say("Looking into the first request, which takes a while.", { pauseAfterBytes: 700 }),
    say("Second done."),
    say("Third done."),
  );
  await openNewSession(page);
  // The send's answer comes after the session's events (it names the session first, on another
  // connection): here it is held until "third" is in the box.
  let answer!: () => void;
  const answered = new Promise<void>((r) => (answer = r));
  await page.route(/\/api\/trpc\/[^?]*turns\.send/, async (route) => {
    const response = await route.fetch();
    await answered;
    await route.fulfill({ response });
  });
  await send(page, "first");
  await expect(page.getByTestId("stop")).toBeVisible();
  const composer = page.getByTestId("composer");
  await composer.fill("second");
  await composer.press("Enter");
  await composer.fill("third");
  answer();
  // The answer handled (the tab is named after the first message): "third" is still there.
  await expect(page).toHaveTitle(/first/);
  await expect(composer).toHaveValue("third");
  await composer.press("Enter");
  await expect(page.getByTestId("queued-text")).toHaveText(["second", "third"]);
  model.provider.resume();
  await expect(page.getByTestId("msg-user")).toHaveText(["first", "second", "third"], { timeout: 30_000 });
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Third done.");
});

test("a message the server refuses because a turn runs, or sent before its turn shows here, is queued", async ({
  page,
  context,
  model,
}) => {
  model.script(
    say("Working on the other tab's request for a while.", { pauseAfterBytes: 700 }),
    say("Mine done."),
    say("Later done, after a pause.", { pauseAfterBytes: 700 }),
    say("After done."),
  );
  const events = await eventsOnHold(page);
  const id = await openNewSession(page);
  const other = await context.newPage();
  await other.goto(`/s/${id}`);
  // This page hears nothing of the turn the other tab starts: the server refuses it a turn.
  events.hold();
  await send(other, "from the other tab");
  await other.close();
  const composer = page.getByTestId("composer");
  await composer.fill("mine");
  await composer.press("Enter");
  await expect(page.getByTestId("queued-text")).toHaveText(["mine"]);
  await expect(composer).toHaveValue("");
  events.release();
  await expect(page.getByTestId("stop")).toBeVisible();
  model.provider.resume();
  await expect(page.getByTestId("msg-user")).toHaveText(["from the other tab", "mine"], { timeout: 30_000 });
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Mine done.");
  await expect(page.getByTestId("send")).toBeVisible();

  // Its own send answered, the turn's events not here yet: the next message waits for that turn.
  events.hold();
  await composer.fill("later");
  const answered = page.waitForResponse(/\/api\/trpc\/[^?]*turns\.send/);
  await composer.press("Enter");
  await answered;
  await expect(composer).toHaveValue("");
  await composer.fill("after");
  await composer.press("Enter");
  await expect(page.getByTestId("queued-text")).toHaveText(["after"]);
  events.release();
  await expect(page.getByTestId("stop")).toBeVisible();
  model.provider.resume();
  await expect(page.getByTestId("msg-user")).toHaveText(["from the other tab", "mine", "later", "after"], {
    timeout: 30_000,
  });
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("After done.");
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
