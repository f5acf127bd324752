// Sharing a session read-only, in two browser contexts against the real server: the owner
// creates a link in the Share dialog; a second context (another person: no cookies of the
// owner's) opens it and sees the chat history and a file, read-only, then the live events of a
// turn the owner starts, an approval card without its answers included; the owner revokes the
// link and the viewer's page says so at once, and again after a reload. The owner opening the
// link in their own browser gets the read-only view in that tab only: their IDE stays theirs.
import { call, card, expect, openNewSession, say, send, test, writeWorkspaceFile } from "./fixtures";

test("a read-only link: history, files and live events for the viewer, until the owner revokes it", async ({
  page,
  browser,
  context,
  model,
  baseURL,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL });
  writeWorkspaceFile("shared.txt", "shared file contents\n");
  model.script(say("First answer."));
  const sessionId = await openNewSession(page);
  await send(page, "Hello");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("First answer.");

  await page.getByTestId("share-open").click();
  await page.getByTestId("share-expiry").selectOption({ label: "7 days" });
  await page.getByTestId("share-create").click();
  const url = await page.getByTestId("share-url").inputValue();
  expect(url).toMatch(/\/share\/[A-Za-z0-9_-]{22}$/);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
  await expect(page.getByTestId("share-link")).toHaveAttribute("data-state", "active");
  await expect(page.getByTestId("share-link")).toContainText("expires");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("share-dialog")).toHaveCount(0);

  // The owner opens the link in this same browser: that tab is the read-only share view...
  const own = await context.newPage();
  await own.goto(url);
  await expect(own).toHaveURL(new RegExp(`/s/${sessionId}\\?shared=1$`));
  await expect(own.getByTestId("readonly-banner")).toHaveText("Shared read-only");
  await expect(own.getByTestId("msg-assistant")).toContainText("First answer.");
  await expect(own.getByTestId("composer")).toHaveCount(0);
  // ...and the owner's IDE, loaded again with the viewer cookie in the browser, is still the owner's.
  await page.reload();
  await expect(page.getByTestId("composer")).toBeVisible();
  await expect(page.getByTestId("share-open")).toBeVisible();
  await expect(page.getByTestId("readonly-banner")).toHaveCount(0);
  const home = await context.newPage();
  await home.goto("/");
  await expect(home).toHaveURL(/\/$/);
  await home.goto(`/s/${sessionId}`);
  await expect(home.getByTestId("composer")).toBeVisible();
  await Promise.all([own.close(), home.close()]);

  const other = await browser.newContext();
  try {
    const viewer = await other.newPage();
    await viewer.goto(url);
    await expect(viewer).toHaveURL(new RegExp(`/s/${sessionId}\\?shared=1$`));
    await expect(viewer.getByTestId("readonly-banner")).toHaveText("Shared read-only");
    await expect(viewer.getByTestId("msg-user")).toHaveText("Hello");
    await expect(viewer.getByTestId("msg-assistant")).toContainText("First answer.");
    for (const hidden of ["composer", "share-open", "toggle-preview", "new-file", "delete"])
      await expect(viewer.getByTestId(hidden)).toHaveCount(0);
    await expect(viewer.getByTestId("pane-terminal")).toContainText("The terminal is not shared.");

    // A file, read-only: typing changes nothing.
    await viewer.locator('[data-testid="tree-item"][data-path="shared.txt"]').click();
    const lines = viewer.locator(".monaco-editor .view-lines").first();
    await expect(lines).toContainText("shared file contents");
    await expect(viewer.getByTestId("code-editor")).toHaveAttribute("data-readonly", "true");
    await lines.click();
    await viewer.keyboard.type("VIEWER WAS HERE");
    await expect(lines).not.toContainText("VIEWER WAS HERE");
    await expect(viewer.locator('[data-testid="editor-tab"][data-path="shared.txt"]')).toHaveAttribute(
      "data-dirty",
      "false",
    );

    // A new turn of the owner's, live: the approval card shows, without answers, for the viewer.
    model.script(
      call("shell", { command: "echo shared-run > run.txt && cat run.txt" }),
      say("Second answer, streamed live.", { deltaChars: 3, delayMs: 20 }),
    );
    await send(page, "Run it");
    await expect(viewer.getByTestId("msg-user").last()).toHaveText("Run it");
    const viewerCard = viewer.getByTestId("approval-card");
    await expect(viewerCard).toHaveAttribute("data-state", "pending");
    await expect(viewerCard.getByTestId("approval-waiting")).toBeVisible();
    await expect(viewerCard.getByTestId("approve-once")).toHaveCount(0);
    await page.getByTestId("approval-card").getByTestId("approve-once").click();
    await expect(card(viewer, "shell").getByTestId("tool-output")).toContainText("shared-run");
    await expect(viewer.getByTestId("msg-assistant").last()).toContainText("Second answer, streamed live.");

    // Revoked: the viewer's page says so at once, and after a reload.
    await page.getByTestId("share-open").click();
    await page.getByTestId("share-revoke").click();
    await expect(page.getByTestId("share-link")).toHaveAttribute("data-state", "revoked");
    await expect(viewer.getByTestId("link-ended")).toContainText("This share link was revoked");
    await viewer.reload();
    await expect(viewer.getByText("This share link was revoked. Ask the session's owner for a new one.")).toBeVisible();
    await expect(viewer.getByTestId("msg-user")).toHaveCount(0);
  } finally {
    await other.close();
  }
});
