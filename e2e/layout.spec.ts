// The IDE's layout at a small laptop's size (1024×700) and a large screen's (1920×1080), measured
// rather than screenshot-compared: the editor keeps at least 400 px (or the panes fold away), the
// status bar's items and the editor's "Ln, Col" stay on one line, the preview's port field shows
// a whole port. Panes are shown and hidden with Ctrl+B / Ctrl+J and the top bar's buttons, sizes
// and visibility survive a reload, a viewer whose link is revoked sees that (not "Reconnecting…"),
// and only the IDE's pages are cross-origin isolated (for the dormant WebContainer).
import type { Locator, Page } from "@playwright/test";
import { expect, openNewSession, shot, test, writeWorkspaceFile } from "./fixtures";

const box = async (l: Locator) => (await l.boundingBox())!;
/** One line of 12–13 px text is under 20 px high; a wrapped item is at least two lines. */
const ONE_LINE = 20;

async function expectOneLineStatus(page: Page): Promise<void> {
  const items = page.getByTestId("status-bar").locator(":scope > span");
  const n = await items.count();
  expect(n).toBeGreaterThan(0);
  for (let i = 0; i < n; i++) {
    const b = await items.nth(i).boundingBox();
    if (b && b.width > 0) expect(b.height, `status item ${i}`).toBeLessThanOrEqual(ONE_LINE);
  }
}

async function openFile(page: Page, path: string): Promise<void> {
  await page.locator(`[data-testid="tree-item"][data-path="${path}"]`).click();
  await expect(page.getByTestId("editor-position")).toBeVisible();
}

test("1024×700 with the preview open: panes fold instead of squeezing the editor, nothing wraps", async ({ page }) => {
  writeWorkspaceFile("layout-small.txt", "one line\n");
  await page.setViewportSize({ width: 1024, height: 700 });
  await openNewSession(page);
  await openFile(page, "layout-small.txt");
  const editor = page.getByTestId("pane-editor");
  expect((await box(editor)).width).toBeGreaterThanOrEqual(400);

  await page.getByTestId("toggle-preview").click();
  await expect(page.getByTestId("pane-preview")).toBeVisible();
  // No room for all four: the side bar (shown longer ago) folds, the editor keeps 400 px.
  await expect(page.getByTestId("pane-files")).toBeHidden();
  await expect(page.getByTestId("toggle-side")).toHaveAttribute("aria-pressed", "false");
  expect((await box(editor)).width).toBeGreaterThanOrEqual(400);
  expect((await box(page.getByTestId("pane-preview"))).width).toBeGreaterThanOrEqual(320);
  expect((await box(page.getByTestId("pane-chat"))).width).toBeGreaterThanOrEqual(280);
  expect((await box(page.getByTestId("preview-port"))).width).toBeGreaterThanOrEqual(60);
  expect((await box(page.getByTestId("editor-position"))).height).toBeLessThanOrEqual(ONE_LINE);
  await expectOneLineStatus(page);
  await shot(page, "layout-1024-preview");

  // Ctrl+B brings the side bar back; the preview gives way now.
  await page.keyboard.press("Control+KeyB");
  await expect(page.getByTestId("pane-files")).toBeVisible();
  await expect(page.getByTestId("pane-preview")).toBeHidden();
  await expect(page.getByTestId("toggle-preview")).toHaveAttribute("aria-pressed", "false");
  expect((await box(editor)).width).toBeGreaterThanOrEqual(400);
  await shot(page, "layout-1024");

  // Nothing in the frame runs past the window's right edge.
  for (const id of ["pane-files", "pane-editor", "pane-chat", "pane-terminal", "status-bar"]) {
    const b = await box(page.getByTestId(id));
    expect(b.x + b.width, id).toBeLessThanOrEqual(1024 + 1);
  }
});

test("1920×1080: Ctrl+B, Ctrl+J and the buttons hide and show panes; sizes and visibility survive a reload", async ({
  page,
}) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await openNewSession(page);
  const files = page.getByTestId("pane-files");
  const terminal = page.getByTestId("pane-terminal");
  const chat = page.getByTestId("pane-chat");
  await page.getByTestId("toggle-preview").click();
  for (const p of ["pane-files", "pane-editor", "pane-preview", "pane-chat", "pane-terminal"])
    await expect(page.getByTestId(p)).toBeVisible();
  expect((await box(page.getByTestId("pane-editor"))).width).toBeGreaterThanOrEqual(400);
  await expectOneLineStatus(page);
  await expect(page.getByTestId("events-state")).toHaveText("Connected");
  await shot(page, "layout-1920");

  await page.getByTestId("pane-editor").click();
  await page.keyboard.press("Control+KeyB");
  await expect(files).toBeHidden();
  await expect(page.getByTestId("split-files")).toHaveCount(0);
  await page.keyboard.press("Control+KeyJ");
  await expect(terminal).toBeHidden();
  await page.getByTestId("toggle-chat").click();
  await expect(chat).toBeHidden();
  await expect(page.getByTestId("toggle-chat")).toHaveAttribute("aria-pressed", "false");
  // The editor takes the room.
  expect((await box(page.getByTestId("pane-editor"))).width).toBeGreaterThan(1000);

  await page.getByTestId("toggle-side").click();
  await expect(files).toBeVisible();
  await page.getByTestId("toggle-panel").click();
  await expect(terminal).toBeVisible();
  await page.keyboard.press("Control+Alt+KeyB");
  await expect(chat).toBeVisible();

  // Resize by dragging, hide the terminal, reload: all as left.
  const handle = await box(page.getByTestId("split-chat"));
  await page.mouse.move(handle.x + 2, handle.y + handle.height / 2);
  await page.mouse.down();
  await page.mouse.move(handle.x - 98, handle.y + handle.height / 2, { steps: 6 });
  await page.mouse.up();
  await expect.poll(async () => Math.round((await box(chat)).width)).toBeGreaterThanOrEqual(490);
  const chatWidth = Math.round((await box(chat)).width);
  await page.keyboard.press("Control+KeyJ");
  await expect(terminal).toBeHidden();
  await page.reload();
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "connected");
  await expect(terminal).toBeHidden();
  await expect(page.getByTestId("pane-preview")).toBeVisible();
  await expect.poll(async () => Math.round((await box(chat)).width)).toBe(chatWidth);
  // The palette offers the same toggles.
  await page.keyboard.press("Control+Shift+KeyP");
  await page.keyboard.type("Toggle Panel");
  await page.keyboard.press("Enter");
  await expect(terminal).toBeVisible();
});

test("a viewer whose link is revoked sees the revoke in the banner and the status bar, not a reconnect", async ({
  page,
  browser,
}) => {
  await openNewSession(page);
  await page.getByTestId("share-open").click();
  await page.getByTestId("share-create").click();
  const url = await page.getByTestId("share-url").inputValue();
  const other = await browser.newContext();
  try {
    const viewer = await other.newPage();
    await viewer.goto(url);
    await expect(viewer.getByTestId("readonly-banner")).toBeVisible();
    await expect(viewer.getByTestId("events-state")).toHaveAttribute("data-state", "live");
    // The runner is the member's: a viewer's status bar does not speak of it.
    await expect(viewer.getByTestId("runner-state")).toHaveCount(0);

    await page.getByTestId("share-revoke").click();
    await expect(page.getByTestId("share-link")).toHaveAttribute("data-state", "revoked");
    await expect(viewer.getByTestId("link-ended")).toContainText("revoked");
    const state = viewer.getByTestId("events-state");
    await expect(state).toHaveAttribute("data-state", "ended");
    await expect(state).toHaveText("Share link ended");
    // It stays so: the page does not go back to reconnecting once the socket is closed.
    await viewer.waitForTimeout(3_000);
    await expect(state).toHaveAttribute("data-state", "ended");
    await expect(viewer.getByText(/Reconnecting|Runner connected/)).toHaveCount(0);
    await expectOneLineStatus(viewer);
  } finally {
    await other.close();
  }
});

test("only the IDE's pages are cross-origin isolated; the WebContainer note is folded away there", async ({
  page,
  request,
}) => {
  const sessionId = await openNewSession(page);
  const home = await request.get("/");
  expect(home.headers()["cross-origin-embedder-policy"]).toBeUndefined();
  expect(home.headers()["cross-origin-opener-policy"]).toBeUndefined();
  expect(home.headers()["x-content-type-options"]).toBe("nosniff");
  const ide = await request.get(`/s/${sessionId}`);
  expect(ide.headers()["cross-origin-embedder-policy"]).toBe("credentialless");
  expect(ide.headers()["cross-origin-opener-policy"]).toBe("same-origin");

  // Reached from home (client-side navigation) the page keeps home's headers: no WebContainer offered.
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(false);
  await page.getByTestId("toggle-preview").click();
  await expect(page.getByTestId("preview-pane")).toBeVisible();
  await expect(page.getByTestId("preview-webcontainer")).toHaveCount(0);

  // Loaded directly it is isolated: the note is there, one folded line.
  await page.goto(`/s/${sessionId}`);
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(true);
  const note = page.getByTestId("preview-webcontainer");
  await expect(note).toBeVisible();
  await expect(note).not.toHaveAttribute("open", "");
  expect((await box(note)).height).toBeLessThanOrEqual(ONE_LINE + 8);
  await note.locator("summary").click();
  await expect(note.getByRole("button", { name: "Try it" })).toBeVisible();
});
