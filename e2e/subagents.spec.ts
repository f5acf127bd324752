// Subagents in the browser: two task calls run in parallel; under each task card its subagent's
// collapsible card shows what the subagent said and its own tool cards (a read that ran, a write
// that was refused), open while it works and folded once it reported; the timeline holds only
// the task cards; a reload shows the same.
import type { Page } from "@playwright/test";
import { expect, openNewSession, send, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const tool = (name: string, args: object) => ({ type: "tool_call" as const, name, arguments: JSON.stringify(args) });
const words = (text: string) => ({ type: "text" as const, text });

function subagentCards(page: Page) {
  return page.getByTestId("subagent-card");
}

test("parallel subagents as collapsible cards with their own calls, the same after a reload", async ({
  page,
  model,
}) => {
  writeWorkspaceFile("alpha.ts", "export const alpha = 1;\n");
  writeWorkspaceFile("beta.ts", "export const beta = 2;\n");
  model.route((req) => {
    const body = req.body as { messages: { role: string }[] };
    const step = body.messages.filter((m) => m.role === "assistant").length;
    if (!req.raw.includes("You are a subagent")) {
      if (step === 0) {
        return {
          blocks: [
            tool("task", { description: "Find alpha", prompt: "JOB-A: find where alpha is defined." }),
            tool("task", { description: "Find beta", prompt: "JOB-B: find where beta is defined." }),
          ],
        };
      }
      return { blocks: [words("Both found: alpha in alpha.ts, beta in beta.ts.")] };
    }
    const job = /JOB-([AB])/.exec(req.raw)?.[1];
    if (job === "A") {
      return step === 0
        ? { blocks: [words("Looking for alpha."), tool("read_file", { path: "alpha.ts" })], delayMs: 20 }
        : { blocks: [words("alpha is defined in alpha.ts, line 1.")], delayMs: 30, deltaChars: 4 };
    }
    return step === 0
      ? {
          blocks: [
            tool("read_file", { path: "beta.ts" }),
            tool("write_file", { path: "beta.ts", content: "changed\n" }),
          ],
          delayMs: 20,
        }
      : { blocks: [words("beta is defined in beta.ts, line 1; I could not change it.")], delayMs: 30, deltaChars: 4 };
  });
  await openNewSession(page);
  await send(page, "Where are alpha and beta defined?");

  await expect(page.getByTestId("msg-assistant").last()).toContainText("Both found");
  const log = page.getByTestId("chat-log");
  // The timeline has the two task calls; the subagents' calls are inside their cards.
  await expect(log.locator(':scope > [data-testid="task-call"]')).toHaveCount(2);
  await expect(log.locator(':scope > [data-testid="tool-card"]')).toHaveCount(0);
  await expect(
    page.locator('[data-testid="tool-card"][data-tool="task"] [data-testid="tool-output"]').first(),
  ).toHaveText("alpha is defined in alpha.ts, line 1.");

  const check = async () => {
    const cards = subagentCards(page);
    await expect(cards).toHaveCount(2);
    // Folded once reported.
    for (const i of [0, 1]) await expect(cards.nth(i)).not.toHaveAttribute("open", "");
    await expect(cards.nth(0).locator(":scope > summary")).toHaveText("Subagent: Find alpha · 1 tool call");
    await expect(cards.nth(1).locator(":scope > summary")).toHaveText("Subagent: Find beta · 2 tool calls");
    await cards.nth(0).locator(":scope > summary").click();
    await expect(cards.nth(0).getByTestId("subagent-text").first()).toHaveText("Looking for alpha.");
    await expect(cards.nth(0).locator('[data-testid="tool-card"][data-tool="read_file"]')).toHaveAttribute(
      "data-status",
      "succeeded",
    );
    await cards.nth(1).locator(":scope > summary").click();
    await expect(cards.nth(1).locator('[data-testid="tool-card"][data-tool="read_file"]')).toHaveAttribute(
      "data-status",
      "succeeded",
    );
    const refused = cards.nth(1).locator('[data-testid="tool-card"][data-tool="write_file"]');
    await expect(refused).toHaveAttribute("data-status", "blocked");
    // A refusal is shown as a note for the person, the model's own text behind a toggle: either says it.
    await expect(refused).toContainText("not available to a subagent");
    // Folds again on a click.
    await cards.nth(0).locator(":scope > summary").click();
    await expect(cards.nth(0).locator('[data-testid="tool-card"]')).toBeHidden();
  };
  await check();
  await shot(page, "subagents");
  expect(readFileSync(join(workspaceDir(), "beta.ts"), "utf8")).toBe("export const beta = 2;\n");

  await page.reload();
  await expect(page.getByTestId("msg-assistant").last()).toContainText("Both found");
  await check();
});
