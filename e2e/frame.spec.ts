// The first thing a person does: open Quiver, start a session, see the IDE with its runner.
import { expect, test } from "@playwright/test";

test("creates a session and shows the IDE frame with the runner connected", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Quiver" })).toBeVisible();
  await page.getByTestId("new-session").click();
  await expect(page).toHaveURL(/\/s\/[a-z0-9]+$/);
  const path = new URL(page.url()).pathname;
  await expect(page.getByTestId("ide-frame")).toBeVisible();
  for (const pane of ["files", "editor", "chat", "terminal"])
    await expect(page.getByTestId(`pane-${pane}`)).toBeVisible();
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "connected");
  await page.screenshot({ path: "test-results/e2e/ide-frame.png" });

  // Listed at home (other tests' sessions may be there too: the suite shares one server).
  await page.goto("/");
  await expect(page.getByTestId("session-list").locator(`a[href="${path}"]`)).toHaveCount(1);
});

test("health reports the database and the runner", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.ok()).toBe(true);
  const body = await res.json();
  expect(body.database).toMatchObject({ provider: "sqlite", up: true });
  expect(body.runners.some((r: { connected: boolean }) => r.connected)).toBe(true);
});
