// The agent's task list and questions in the browser: the list is pinned above the message box
// and follows each todo_write live (done/total), a question card shows where ask_user's call is
// without taking the keyboard from the message box, one question is answered by a click and one
// by typing, and a reload in the middle and at the end shows the same list and cards.
import type { Page } from "@playwright/test";
import { call, expect, openNewSession, say, send, shot, test } from "./fixtures";

const question = (page: Page, state: string) => page.locator(`[data-testid="question-card"][data-state="${state}"]`);
const todo = (content: string, status: "pending" | "in_progress" | "completed") => ({ content, status });

test("a pinned live task list and two questions, answered by a click and by typing, survive reloads", async ({
  page,
  model,
}) => {
  model.script(
    call("todo_write", {
      todos: [
        todo("Read the config", "completed"),
        todo("Pick a port", "in_progress"),
        todo("Start the server", "pending"),
      ],
    }),
    {
      ...call("ask_user", {
        question: "Which port should the server use?",
        options: [{ label: "3000", description: "the default" }, { label: "8080" }],
      }),
      delayMs: 100,
    },
    call("todo_write", {
      todos: [
        todo("Read the config", "completed"),
        todo("Pick a port", "completed"),
        todo("Start the server", "in_progress"),
      ],
    }),
    call("ask_user", { question: "What should the log prefix be?", options: [{ label: "[srv]" }, { label: "none" }] }),
    say("All set."),
  );
  await openNewSession(page);
  await send(page, "Set up the server.");

  // The list is pinned and live; the first card asks without taking the message box's focus.
  const list = page.getByTestId("todo-list");
  await expect(list).toBeVisible();
  await expect(page.getByTestId("todo-progress")).toHaveText("1/3");
  await expect(list.getByTestId("todo-item").nth(1)).toHaveAttribute("data-status", "in_progress");
  await expect(question(page, "pending")).toHaveCount(1);
  await expect(question(page, "pending").getByTestId("question-text")).toHaveText("Which port should the server use?");
  expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe("composer");
  await shot(page, "question-pending");

  // A reload while it waits: the same list and the same open card.
  await page.reload();
  await expect(page.getByTestId("todo-progress")).toHaveText("1/3");
  await expect(question(page, "pending")).toHaveCount(1);

  // Collapsible: the head alone shows the task in progress and the count.
  await page.getByTestId("todo-toggle").click();
  await expect(page.getByTestId("todo-item")).toHaveCount(0);
  await expect(page.getByTestId("todo-list")).toContainText("Pick a port");
  await page.getByTestId("todo-toggle").click();
  await expect(page.getByTestId("todo-item")).toHaveCount(3);

  // Answered by a click, once the card is armed.
  const first = question(page, "pending");
  await expect(first).toHaveAttribute("data-armed", "true");
  await first.getByTestId("question-option").nth(1).click();
  await expect(page.locator('[data-testid="question-card"][data-state="answered"]')).toHaveCount(1);
  await expect(page.getByTestId("todo-progress")).toHaveText("2/3");

  // The second, answered by typing.
  const second = question(page, "pending");
  await expect(second.getByTestId("question-text")).toHaveText("What should the log prefix be?");
  await expect(second).toHaveAttribute("data-armed", "true");
  await second.getByTestId("question-text-input").fill("[api]");
  await second.getByTestId("question-text-input").press("Enter");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("All set.");
  await expect(page.locator('[data-testid="question-card"][data-state="answered"]')).toHaveCount(2);

  // What the model was told, each time.
  const bodies = model.provider.requests.map((r) => JSON.stringify(r.body));
  expect(bodies.some((b) => b.includes('The person chose option 2: \\"8080\\".'))).toBe(true);
  expect(bodies.some((b) => b.includes("The person answered in their own words:\\n[api]"))).toBe(true);

  // After a reload: both cards answered with what was chosen, the list as it was last.
  await page.reload();
  const answered = page.locator('[data-testid="question-card"][data-state="answered"]');
  await expect(answered).toHaveCount(2);
  await expect(answered.nth(0).getByTestId("question-outcome")).toHaveText("Answered with option 2");
  await expect(answered.nth(1).getByTestId("question-outcome")).toHaveText("Answered: [api]");
  await expect(page.getByTestId("todo-progress")).toHaveText("2/3");
  await shot(page, "questions-answered");
});
