// Several orgs, one person, on the accounts server: "New org…" in the switcher makes an org and
// switches to it; the home page then lists that org's sessions only, and the person's other open
// tabs follow the switch (the home list reloads; an IDE of the old org's session says it is not
// open any more).
import type { Page } from "@playwright/test";
import { expect, test } from "./accounts-fixtures";
import { openNewSession, shot } from "./fixtures";

const sessionItem = (page: Page, id: string) => page.locator(`[data-testid="session-item"][data-id="${id}"]`);
const activeOrg = (page: Page) => page.getByTestId("org-select").locator("option:checked");

test("switching orgs shows the other org's sessions, in every open tab", async ({ page, people }) => {
  await people.signUp(page, "switcher");
  const home = (await openNewSession(page)) as string;
  await page.goto("/");
  const homeOrg = (await activeOrg(page).textContent())!;
  await expect(sessionItem(page, home)).toBeVisible();

  // A second tab of the same browser, on the first org's session.
  const ide = await page.context().newPage();
  await ide.goto(`/s/${home}`);
  await expect(ide.getByTestId("ide-frame")).toBeVisible();

  page.once("dialog", (d) => void d.accept("Side project"));
  await page.getByTestId("org-select").selectOption({ label: "New org…" });
  await expect(activeOrg(page)).toHaveText("Side project");
  await expect(page).toHaveURL(/\/$/);
  await expect(sessionItem(page, home)).toHaveCount(0);
  const side = (await openNewSession(page)) as string;
  await page.goto("/");
  await expect(sessionItem(page, side)).toBeVisible();
  await expect(sessionItem(page, home)).toHaveCount(0);
  // The other tab followed: its session belongs to the org no longer active.
  await expect(
    ide
      .getByTestId("access-ended")
      .or(ide.getByText(`No session ${home}.`))
      .first(),
  ).toBeVisible();
  await shot(ide, "orgs-switch-other-tab");

  // Back: the first org's sessions, and the other tab is at home with them.
  await ide.goto("/");
  await page.getByTestId("org-select").selectOption({ label: homeOrg });
  await expect(activeOrg(page)).toHaveText(homeOrg);
  await expect(sessionItem(page, home)).toBeVisible();
  await expect(sessionItem(page, side)).toHaveCount(0);
  await expect(activeOrg(ide)).toHaveText(homeOrg);
  await expect(sessionItem(ide, home)).toBeVisible();

  // A tab reloads on any switch it hears, even to the org its switcher already shows: its other
  // answers (the session list) may be from before the switch.
  await ide.evaluate(() => ((window as unknown as { fromBefore?: boolean }).fromBefore = true));
  const orgId = await page.getByTestId("org-select").inputValue();
  await page.evaluate((id) => {
    const channel = new BroadcastChannel("quiver-active-org");
    channel.postMessage({ orgId: id, from: "another tab" });
    channel.close();
  }, orgId);
  const markedPage = () =>
    ide.evaluate(() => (window as unknown as { fromBefore?: boolean }).fromBefore).catch(() => true); // mid-reload
  await expect.poll(markedPage).toBeUndefined();
  await expect(sessionItem(ide, home)).toBeVisible();
  await ide.close();
});
