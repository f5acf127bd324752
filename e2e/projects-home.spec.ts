// The home page's projects, in the browser against the real server and its local runner: a new
// empty project gets a workspace on the runner, a session opened in it lands in its list (and its
// IDE opens), the runners page shows the runner with its load, and deleting the project asks
// first, then removes the project, its session and its workspace folder.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "./fixtures";

test("new project, a session in it, the runners page, and deleting it after asking", async ({ page }) => {
  const name = `proj-${Date.now()}`;
  await page.goto("/");
  // The local owner's workspace, made at start before the runner connected, is on that runner.
  const defaultCard = page.locator('[data-testid="project"][data-name="Default"]');
  await expect(defaultCard.getByTestId("project-workspace")).toContainText(/on runner \S+/);
  await page.getByTestId("new-project").click();
  // A git source says where its credential comes from, and that page is a click away.
  await page.getByText("Git repository").click();
  await expect(page.getByTestId("project-git-credential-hint").getByRole("link")).toHaveAttribute(
    "href",
    "/settings/git",
  );
  await expect(page.getByRole("link", { name: "Git credentials" }).first()).toBeVisible();
  await page.getByText("Empty", { exact: true }).click();
  await page.getByTestId("project-name").fill(name);
  await page.getByTestId("project-create").click();
  const card = page.locator(`[data-testid="project"][data-name="${name}"]`);
  await expect(card.getByTestId("project-workspace")).toContainText(/on runner \S+/);
  await expect(card.getByTestId("project-source")).toContainText("empty");

  await card.getByTestId("project-new-session").click();
  await page.waitForURL(/\/s\/[a-z0-9]+$/);
  const sessionId = page.url().split("/").pop()!;
  await expect(page.getByTestId("pane-files")).toBeVisible();
  await page.goto("/");
  await expect(card.locator(`[data-testid="session-item"][data-id="${sessionId}"]`)).toBeVisible();
  const workspaceText = (await card.getByTestId("project-workspace").textContent()) ?? "";
  expect(workspaceText).toMatch(/on runner/);

  await page.goto("/settings/runners");
  const row = page.getByTestId("runner-row").first();
  await expect(row.getByTestId("runner-state")).toContainText("live since");
  await expect(row.getByTestId("runner-load")).toContainText(/\d+ workspaces?/);
  await expect(row.getByTestId("runner-workspace").filter({ hasText: name })).toHaveCount(1);

  // Its workspace folder on the local runner's root, before and after.
  const listed = (await (await page.request.get("/api/trpc/projects.list")).json()) as {
    result: { data: Array<{ name: string; workspace: { id: string } | null }> };
  };
  const workspaceId = listed.result.data.find((p) => p.name === name)!.workspace!.id;
  const folder = join(process.env.E2E_DATA_DIR!, "workspaces", workspaceId);
  expect(existsSync(folder)).toBe(true);

  await page.goto("/");
  // The first answer is no: nothing goes.
  page.once("dialog", (d) => void d.dismiss());
  await card.getByTestId("project-delete").click();
  await expect(card).toBeVisible();
  page.once("dialog", (d) => {
    expect(d.message()).toContain(`Delete the project "${name}" with its 1 session`);
    void d.accept();
  });
  await card.getByTestId("project-delete").click();
  await expect(card).toHaveCount(0);
  await expect.poll(() => existsSync(folder)).toBe(false);
});
