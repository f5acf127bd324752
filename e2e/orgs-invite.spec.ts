// A team as a new user makes one, on the accounts server: an admin signs up and invites a
// teammate from the members page; the teammate, in a browser of their own, opens the link, signs
// up through it (the form's both password fields) and joins, signs in again later and switches to
// the team; they cannot edit the org's tool policy, and the admin's deny rule
// blocks the teammate's agent; removing the teammate ends their open IDE at once.
import type { Page } from "@playwright/test";
import { expect, newPerson, signInPage, signOutApi, signUpApi, test } from "./accounts-fixtures";
import { call, card, openNewSession, say, send, shot } from "./fixtures";

const memberRow = (page: Page, email: string) => page.locator(`[data-testid="member-row"][data-email="${email}"]`);

test("an admin invites a teammate who joins, works under the admin's policy, and is removed", async ({
  page,
  secondPage: mate,
  model,
}) => {
  const admin = newPerson("admin");
  await signUpApi(page, admin);
  await page.goto("/settings/members");
  await expect(memberRow(page, admin.email)).toHaveAttribute("data-role", "owner");

  // The invitation: its link is shown once, to copy.
  const teammate = newPerson("mate");
  await page.getByTestId("invite-email").fill(teammate.email);
  await page.getByTestId("invite-role").selectOption("member");
  await page.getByTestId("invite-submit").click();
  const link = await page.getByTestId("invite-link").inputValue();
  expect(link).toMatch(/\/invite\/[A-Za-z0-9_-]{32}$/);
  await expect(page.locator(`[data-testid="invitation-row"][data-email="${teammate.email}"]`)).toHaveAttribute(
    "data-state",
    "pending",
  );
  await shot(page, "orgs-invited");

  // The teammate opens it signed out, signs up through it and joins.
  await mate.goto(link);
  await expect(mate.getByTestId("invite-page")).toHaveAttribute("data-state", "pending");
  await expect(mate.getByTestId("invite-page")).toContainText(teammate.email);
  await mate.getByTestId("invite-signup").click();
  await expect(mate).toHaveURL(/\/signup\?invitation=/);
  await mate.getByLabel("Name").fill(teammate.name);
  await mate.getByLabel("Password", { exact: true }).fill(teammate.password);
  await mate.getByLabel("Password again").fill(teammate.password);
  await mate.getByRole("button", { name: /create account/i }).click();
  await expect(mate).toHaveURL(/\/invite\//);
  await mate.getByTestId("invite-accept").click();
  await expect(mate.getByTestId("org-select")).toBeVisible();
  const teamName = await page.getByTestId("org-select").locator("option:checked").textContent();
  await expect(mate.getByTestId("org-select").locator("option:checked")).toHaveText(teamName!);
  // The link worked once: the admin's list no longer has it, and it says so when opened again.
  await page.reload();
  await expect(memberRow(page, teammate.email)).toHaveAttribute("data-role", "member");
  await expect(page.locator(`[data-testid="invitation-row"][data-email="${teammate.email}"]`)).toHaveCount(0);
  await mate.goto(link);
  await expect(mate.getByTestId("invite-page")).toHaveAttribute("data-state", "accepted");

  // Signing in again later starts in the teammate's own org; they switch to the team.
  await signOutApi(mate);
  await signInPage(mate, teammate);
  await expect(mate.getByTestId("org-select").locator("option:checked")).not.toHaveText(teamName!);
  await mate.getByTestId("org-select").selectOption({ label: teamName!.trim() });
  await expect(mate).toHaveURL(/\/$/);
  await expect(mate.getByTestId("org-select").locator("option:checked")).toHaveText(teamName!);

  // A member reads the policy; only admins edit it.
  await mate.goto("/settings/policy");
  await expect(mate.getByTestId("policy-page")).toContainText("Only org admins and owners can change it.");
  await expect(mate.getByTestId("rule-form")).toHaveCount(0);
  await expect(mate.getByTestId("policy-save")).toHaveCount(0);
  await mate.goto("/settings/members");
  await expect(mate.getByTestId("invite-email")).toHaveCount(0);
  await expect(mate.getByTestId("member-remove")).toHaveCount(0);

  // The admin's deny rule judges the teammate's agent.
  await page.goto("/settings/policy");
  const form = page.getByTestId("rule-form");
  await form.getByTestId("rule-effect").selectOption("deny");
  await form.getByTestId("rule-command").fill("git push");
  await form.getByTestId("rule-reason").fill("Pushes go through review");
  await form.getByTestId("rule-add").click();
  await page.getByTestId("policy-save").click();
  await expect(page.getByTestId("policy-saved")).toBeVisible();
  model.script(call("shell", { command: "git push origin main" }), say("The push is not allowed here."));
  await openNewSession(mate);
  await send(mate, "Push the branch.");
  await expect(card(mate, "shell")).toHaveAttribute("data-status", "blocked");
  await expect(card(mate, "shell")).toContainText("Pushes go through review");
  await expect(mate.getByTestId("approval-card")).toHaveCount(0);

  // Removing the teammate ends their open IDE at once.
  await page.goto("/settings/members");
  page.once("dialog", (d) => void d.accept());
  const removedAt = Date.now();
  await memberRow(page, teammate.email).getByTestId("member-remove").click();
  await expect(memberRow(page, teammate.email)).toHaveCount(0);
  await expect(mate.getByTestId("access-ended")).toBeVisible({ timeout: 4_000 });
  // Sooner than the 5 s re-check of open sockets would have closed it.
  expect(Date.now() - removedAt).toBeLessThan(4_000);
  await shot(mate, "orgs-removed-ide");
});
