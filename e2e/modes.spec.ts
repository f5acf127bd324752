// Session modes in the browser: Shift+Tab in the message box cycles the mode shown on the chip;
// in accept-edits an edit runs with no approval card and its tool card shows its mode; in plan
// mode exit_plan_mode's card shows the plan, and "Accept and implement" switches the mode and the
// same turn implements it.
import { call, expect, openNewSession, say, send, test } from "./fixtures";

test("Shift+Tab cycles the mode; accept-edits edits with no card; plan → accept → implements", async ({
  page,
  model,
}) => {
  await openNewSession(page);
  const chip = page.getByTestId("mode-chip");
  await expect(chip).toHaveAttribute("data-mode", "ask");
  await page.getByTestId("composer").focus();
  await page.getByTestId("composer").press("Shift+Tab");
  await expect(chip).toHaveAttribute("data-mode", "accept-edits");
  await expect(chip).toHaveText("Accept edits");

  model.script(call("write_file", { path: "modes-e2e.txt", content: "edited\n" }), say("Written."));
  await send(page, "Write the file.");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("Written.");
  const card = page.locator('[data-testid="tool-card"][data-tool="write_file"]');
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect(card.getByTestId("tool-mode")).toHaveText("accept-edits");
  await expect(page.getByTestId("approval-card")).toHaveCount(0);

  // accept-edits → plan
  await page.getByTestId("composer").press("Shift+Tab");
  await expect(chip).toHaveAttribute("data-mode", "plan");
  model.script(
    call("exit_plan_mode", { plan: "# Add a second file\n1. write plan-e2e.txt" }),
    call("write_file", { path: "plan-e2e.txt", content: "planned\n" }),
    say("Implemented."),
  );
  await send(page, "Plan a second file.");
  const planCard = page.getByTestId("plan-card");
  await expect(planCard.getByTestId("plan-text")).toContainText("Add a second file");
  await planCard.getByTestId("plan-mode").selectOption("accept-edits");
  await planCard.getByTestId("plan-accept").click();
  await expect(page.getByTestId("msg-assistant").last()).toContainText("Implemented.");
  await expect(chip).toHaveAttribute("data-mode", "accept-edits");
  await expect(
    page.locator('[data-testid="tool-card"][data-tool="write_file"]').last().getByTestId("tool-mode"),
  ).toHaveText("accept-edits");
  await expect(
    page.locator('[data-testid="tool-card"][data-tool="exit_plan_mode"]').getByTestId("tool-mode"),
  ).toHaveText("plan");
});
