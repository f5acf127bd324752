// A long session opens at its latest turns (server/hub/history.ts): the chat shows the last
// WINDOW_TURNS (40) of 45, says how many came before, and "Show earlier" reads them in front,
// the whole conversation in order, without moving the reader; a live turn after that still
// streams in below.
import { expect, openNewSession, say, test } from "./fixtures";

const TURNS = 45;

test("a long session opens at its latest turns and reads earlier ones on request", async ({ page, model }) => {
  test.setTimeout(120_000);
  model.script(...Array.from({ length: TURNS }, (_, i) => say(`answer ${i}`)), say("live answer"));
  const sessionId = await openNewSession(page);
  // 45 turns through the real server and engine, sent as a script would (one after another:
  // a session runs one turn at a time, so a send during a turn is refused and tried again).
  await page.evaluate(
    async ({ sessionId, turns }) => {
      for (let i = 0; i < turns; i++) {
        for (;;) {
          const res = await fetch("/api/trpc/turns.send", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ sessionId, text: `question ${i}` }),
          });
          if (res.ok) break;
          if (res.status !== 409) throw new Error(`send ${i}: ${res.status} ${await res.text()}`);
          await new Promise((r) => setTimeout(r, 25));
        }
      }
    },
    { sessionId, turns: TURNS },
  );
  await expect(page.getByTestId("msg-assistant").last()).toHaveText(`answer ${TURNS - 1}`, { timeout: 60_000 });

  await page.reload();
  const users = page.getByTestId("msg-user");
  await expect(users.last()).toHaveText(`question ${TURNS - 1}`);
  await expect(users).toHaveCount(40);
  await expect(users.first()).toHaveText("question 5");
  const earlier = page.getByTestId("chat-earlier");
  await expect(earlier).toHaveText("Show earlier (5 more turns)");

  await earlier.click();
  await expect(users).toHaveCount(TURNS);
  await expect(users).toHaveText(Array.from({ length: TURNS }, (_, i) => `question ${i}`));
  // The reader stays where they were: what was at the top is still in view, the new turns above it.
  await expect(users.nth(5)).toBeInViewport();
  await expect(users.first()).not.toBeInViewport();
  await expect(page.getByTestId("msg-assistant")).toHaveText(Array.from({ length: TURNS }, (_, i) => `answer ${i}`));
  await expect(earlier).toBeHidden();

  // Still live: the next turn streams in under them.
  await page.getByTestId("composer").fill("one more");
  await page.getByTestId("composer").press("Enter");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("live answer");
  await expect(users).toHaveCount(TURNS + 1);
});
