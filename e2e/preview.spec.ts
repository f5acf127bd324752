// The live preview: a server started in the IDE's terminal shows up in the preview's port list,
// the pane shows its page from the preview host (forwarded through the real runner), a link to
// another page works and the address bar follows it (and the history API), stopping the server
// shows the clear error, and the choice is remembered.
// Every load goes through a one-minute ticket that the preview host swaps for its own cookie
// (what lets an owner signed in from another machine in); "open in a new tab" does the same.
// A server the agent started without network listens in its command's sandbox: the pane names
// it and says why it cannot be previewed, instead of "nothing listens".
import { call, card, expect, openNewSession, say, send, shot, test, writeWorkspaceFile } from "./fixtures";

const APP_PORT = 8123;

test("a server started in the terminal is previewed, followed through a link, and its stop is reported", async ({
  page,
  context,
  baseURL,
}) => {
  writeWorkspaceFile(
    "preview-site/index.html",
    `<!doctype html><title>home</title><h1>Preview home</h1><a href="/page2.html">to page two</a>`,
  );
  writeWorkspaceFile(
    "preview-site/page2.html",
    `<!doctype html><title>two</title><h1>Page two</h1><form method="post" action="/nowhere"><button>post</button></form>`,
  );
  const sessionId = await openNewSession(page);
  const ticketed: string[] = [];
  page.on("request", (r) => r.url().includes("__quiver_ticket=") && ticketed.push(r.url()));
  // The preview hosts see this browser as one away from the server's machine (a proxy header on
  // their requests only; the IDE stays the loopback owner): only a ticket's cookie lets it in.
  await context.route(
    (u) => u.hostname.endsWith(".localhost"),
    (route) => route.continue({ headers: { ...route.request().headers(), "x-forwarded-for": "203.0.113.9" } }),
  );

  // Keyboard: Ctrl+Alt+P opens the pane and puts the cursor in its address bar.
  await page.keyboard.press("Control+Alt+KeyP");
  const pane = page.getByTestId("pane-preview");
  await expect(pane).toBeVisible();
  await expect(page.getByTestId("preview-port")).toBeFocused();
  await expect(page.getByTestId("preview-ports")).toContainText("No server of this workspace listens yet");
  // The dormant WebContainer is folded away, and offered only on a cross-origin isolated page (layout.spec.ts).
  if (await page.evaluate(() => window.crossOriginIsolated))
    await expect(page.getByTestId("preview-webcontainer")).not.toHaveAttribute("open", "");
  else await expect(page.getByTestId("preview-webcontainer")).toHaveCount(0);

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
  // The frame came in with a ticket, and the preview host took it out of the address.
  expect(ticketed).toEqual([expect.stringMatching(new RegExp(`^${origin}/\\?__quiver_ticket=`))]);
  await expect
    .poll(() =>
      page
        .frames()
        .find((f) => f.url().startsWith(origin))
        ?.url(),
    )
    .toBe(`${origin}/`);
  await shot(page, "preview-home");

  // Straight to the preview host, without the pane: refused, with a page that says what to do.
  const bare = await context.newPage();
  await bare.goto(`${origin}/`);
  await expect(bare.getByRole("heading")).toHaveText("Open this preview from the IDE");
  await bare.close();

  // A new tab: the IDE's host sends it on to the preview with a ticket of its own.
  await expect(page.getByTestId("preview-open")).toHaveAttribute(
    "href",
    `/api/preview/open?session=${sessionId}&port=${APP_PORT}&path=%2F`,
  );
  const [tab] = await Promise.all([context.waitForEvent("page"), page.getByTestId("preview-open").click()]);
  await expect(tab.getByRole("heading")).toHaveText("Preview home");
  expect(tab.url()).toBe(`${origin}/`);
  await tab.close();

  // An absolute link of the app stays on the app's own preview host.
  await frame.getByRole("link", { name: "to page two" }).click();
  await expect(frame.getByRole("heading")).toHaveText("Page two");
  // The address bar follows the frame: a link, and a client-side route change (history API).
  await expect(page.getByTestId("preview-path")).toHaveValue("/page2.html");
  await frame.locator("body").evaluate(() => history.pushState({}, "", "/app/route?tab=2#top"));
  await expect(page.getByTestId("preview-path")).toHaveValue("/app/route?tab=2#top");
  await expect(page.getByTestId("preview-open")).toHaveAttribute(
    "href",
    `/api/preview/open?session=${sessionId}&port=${APP_PORT}&path=${encodeURIComponent("/app/route?tab=2#top")}`,
  );
  await frame.locator("body").evaluate(() => history.back());
  await expect(page.getByTestId("preview-path")).toHaveValue("/page2.html");
  // Following it did not reload the frame: the page is still the one the link opened.
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

test("a server the agent started without network is named as out of the preview's reach, not as nothing listening", async ({
  page,
  model,
}) => {
  const port = 8124;
  model.script(
    call("shell", { command: `python3 -u -m http.server ${port} --bind 127.0.0.1`, yield_time_ms: 1500 }),
    say("The server is running."),
  );
  await openNewSession(page);
  await send(page, "Serve the workspace.");
  const approval = page.getByTestId("approval-card");
  await expect(approval).toHaveAttribute("data-state", "pending");
  await approval.getByTestId("approve-once").click();
  await expect(card(page, "shell")).toHaveAttribute("data-status", "succeeded");

  await page.keyboard.press("Control+Alt+KeyP");
  const walled = page.locator(`[data-testid="preview-port-sandboxed"][data-port="${port}"]`);
  await expect(walled).toContainText("python3");
  await expect(walled).toContainText("a command's sandbox without network");
  await expect(page.getByTestId("preview-ports")).not.toContainText("No server of this workspace listens yet");
  await expect(page.locator(`[data-testid="preview-port-item"][data-port="${port}"]`)).toHaveCount(0);
  await shot(page, "preview-sandboxed-server");
});
