// The live preview: a server started in the IDE's terminal shows up in the preview's port list,
// the pane shows its page from the preview host (forwarded through the real runner), a link to
// another page works, stopping the server shows the clear error, and the choice is remembered.
import { test, expect, openNewSession, shot, writeWorkspaceFile } from "./fixtures";

const APP_PORT = 8123;

test("a server started in the terminal is previewed, followed through a link, and its stop is reported", async ({ page, baseURL }) => {
  writeWorkspaceFile("preview-site/index.html", `<!doctype html><title>home</title><h1>Preview home</h1><a href="/page2.html">to page two</a>`);
  writeWorkspaceFile("preview-site/page2.html", `<!doctype html><title>two</title><h1>Page two</h1><form method="post" action="/nowhere"><button>post</button></form>`);
  const sessionId = await openNewSession(page);

  // Keyboard: Ctrl+Alt+P opens the pane and puts the cursor in its address bar.
  await page.keyboard.press("Control+Alt+KeyP");
  const pane = page.getByTestId("pane-preview");
  await expect(pane).toBeVisible();
  await expect(page.getByTestId("preview-port")).toBeFocused();
  await expect(page.getByTestId("preview-ports")).toContainText("No server of this workspace listens yet");
  await expect(page.getByTestId("preview-webcontainer")).toContainText("Previewing through the runner");

  const term = page.getByTestId("pane-terminal");
  await expect(term).toHaveAttribute("data-state", "open");
  await term.click();
  await page.keyboard.type(`cd preview-site && python3 -m http.server ${APP_PORT}\n`);

  const item = page.locator(`[data-testid="preview-port-item"][data-port="${APP_PORT}"]`);
  await expect(item).toBeVisible();
  await expect(item).toContainText("python3");
  await item.click();

  const frame = page.frameLocator('[data-testid="preview-frame"]');
  await expect(frame.getByRole("heading")).toHaveText("Preview home");
  const origin = `http://${APP_PORT}-${sessionId}.localhost:${new URL(baseURL!).port}`;
  await expect(page.getByTestId("preview-open")).toHaveAttribute("href", `${origin}/`);
  await shot(page, "preview-home");

  // An absolute link of the app stays on the app's own preview host.
  await frame.getByRole("link", { name: "to page two" }).click();
  await expect(frame.getByRole("heading")).toHaveText("Page two");
  // The address bar reaches a page directly too.
  await page.getByTestId("preview-path").fill("/index.html");
  await page.getByTestId("preview-path").press("Enter");
  await expect(frame.getByRole("heading")).toHaveText("Preview home");

  // Stop the server: it leaves the list and the pane reloads onto the clear error.
  await term.click();
  await page.keyboard.press("Control+C");
  await expect(item).toBeHidden();
  await expect(frame.getByRole("heading")).toHaveText(`Nothing listens on port ${APP_PORT} yet`);
  await shot(page, "preview-stopped");

  // The pane, its port and path are remembered for the session.
  await page.reload();
  await expect(page.getByTestId("pane-preview")).toBeVisible();
  await expect(page.getByTestId("preview-port")).toHaveValue(String(APP_PORT));
  await expect(page.getByTestId("preview-path")).toHaveValue("/index.html");
});
