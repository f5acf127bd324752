// The org's tool policy page: an admin adds rules, saves them as a version, and the next tool
// call the model makes is judged by them; the page refuses a rule that matches nothing and keeps
// its versions. The policy is put back to no rules at the end so other tests are not judged by it.
import type { Page } from "@playwright/test";
import { call, card, expect, openNewSession, say, send, shot, test } from "./fixtures";

async function addRule(
  page: Page,
  rule: { effect: string; tool?: string; command?: string; host?: string; reason?: string },
) {
  const form = page.getByTestId("rule-form");
  await form.getByTestId("rule-effect").selectOption(rule.effect);
  if (rule.tool) await form.getByTestId("rule-tool").fill(rule.tool);
  if (rule.command) await form.getByTestId("rule-command").fill(rule.command);
  if (rule.host) await form.getByTestId("rule-host").fill(rule.host);
  await form.getByTestId("rule-reason").fill(rule.reason ?? "");
  await form.getByTestId("rule-add").click();
}

async function clearPolicy(page: Page) {
  await page.goto("/settings/policy");
  const remove = page.getByTestId("rule-remove");
  if ((await remove.count()) === 0) return;
  while ((await remove.count()) > 0) await remove.first().click();
  await page.getByTestId("policy-save").click();
  await expect(page.getByTestId("policy-saved")).toBeVisible();
}

test("an admin saves rules as a new version and the agent's next call is judged by them", async ({ page, model }) => {
  try {
    await page.goto("/");
    await page.getByRole("link", { name: "Tool policy" }).click();
    await expect(page.getByTestId("policy-page")).toBeVisible();
    const before = await page.getByTestId("policy-version").textContent();

    // a rule that matches nothing is refused in the form, before any save
    await page.getByTestId("rule-reason").fill("no conditions");
    await page.getByTestId("rule-add").click();
    await expect(page.getByTestId("rule-form").getByRole("alert")).toContainText("Say what the rule matches");

    await addRule(page, { effect: "allow", tool: "read_*" });
    await addRule(page, { effect: "deny", command: "git push", reason: "Pushes go through review" });
    await expect(page.getByTestId("policy-rule")).toHaveCount(2);
    await expect(page.getByTestId("policy-rule").first()).toHaveAttribute("data-effect", "deny"); // shown strongest first
    await page.getByTestId("policy-save").click();
    await expect(page.getByTestId("policy-saved")).toContainText(/Saved as version \d+/);
    await shot(page, "policy-saved");

    await page.reload();
    await expect(page.getByTestId("policy-version")).not.toHaveText(before ?? "");
    await expect(page.getByTestId("policy-rule")).toHaveCount(2);
    await expect(page.getByTestId("policy-rules")).toContainText("command `git push`");
    await expect(page.getByTestId("policy-history").locator("li").first()).toContainText("2 rules");

    model.script(call("shell", { command: "git push origin main" }), say("The push is not allowed here."));
    await openNewSession(page);
    await send(page, "Push the branch.");
    await expect(card(page, "shell")).toHaveAttribute("data-status", "blocked");
    await expect(card(page, "shell")).toContainText("Pushes go through review");
    await expect(page.getByTestId("approval-card")).toHaveCount(0);
    await expect(page.getByTestId("msg-assistant").last()).toContainText("not allowed");
    await shot(page, "policy-blocked-call");
  } finally {
    await clearPolicy(page);
  }
});
