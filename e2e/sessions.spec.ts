// Sessions inside the IDE: the switcher (Ctrl+Alt+S, search by title, keyboard only) and New
// Session without the home page; the model picker's list from the fake provider's GET /v1/models
// with what takes images; tokens and dollars per turn and the session's total in the top bar
// from scripted usage; Ctrl+Tab between open editors in the order they were last used.
import { expect, openNewSession, say, send, test, writeWorkspaceFile } from "./fixtures";

test("the switcher finds a session by title and opens it; New makes one in place", async ({ page, model }) => {
  const first = await openNewSession(page);
  model.script(say("Noted."), say("Noted too."));
  await send(page, "Alpha login form work");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Noted.");

  await page.getByTestId("session-new").click();
  await expect(page).not.toHaveURL(new RegExp(`/s/${first}$`));
  await expect(page).toHaveURL(/\/s\/[a-z0-9]+$/);
  const second = page.url().split("/").pop()!;
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "connected");
  await send(page, "Beta dark mode");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Noted too.");

  // Keyboard only: the chord opens it with the search focused, typing narrows, Enter opens.
  await page.getByTestId("composer").focus();
  await page.keyboard.press("Control+Alt+KeyS");
  const dialog = page.getByTestId("session-switcher");
  await expect(dialog).toBeVisible();
  await expect(dialog).toHaveAttribute("aria-modal", "true");
  await expect(page.getByTestId("session-search")).toBeFocused();
  await expect(dialog.getByTestId("session-row").first()).toContainText("Beta dark mode (this one)");
  await expect(dialog.getByTestId("session-row").nth(1)).toContainText("Alpha login form work");
  await page.keyboard.type("LOGIN alpha");
  await expect(dialog.getByTestId("session-row")).toHaveCount(1);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/s/${first}$`));
  await expect(page.getByTestId("msg-user").first()).toHaveText("Alpha login form work");

  // Esc closes it and stays; a title nobody has says so, and Enter there starts a new session.
  await page.getByTestId("session-switcher-button").click();
  await page.keyboard.type("no such title");
  await expect(page.getByTestId("session-switcher")).toContainText("No session of this project has");
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("session-switcher")).toHaveCount(0);
  await expect(page).toHaveURL(new RegExp(`/s/${first}$`));
  await page.getByTestId("session-switcher-button").click();
  await page.keyboard.type("no such title");
  await page.keyboard.press("Enter");
  await expect(page).not.toHaveURL(new RegExp(`/s/(${first}|${second})$`));
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "connected");
});

test("the model picker lists the provider's models and which take images", async ({ page, model }) => {
  model.provider.setModels([
    { id: "fake-model", name: "Fake Model", images: true },
    { id: "fake-model-text", name: "Fake Model (text only)", images: false },
  ]);
  await openNewSession(page);
  const picker = page.getByTestId("model-picker");
  // The default shown is the server's own (QUIVER_MODEL of the e2e server).
  await expect(picker).toHaveText("fake-model · Anthropic (default)");
  await picker.click();
  await page.getByTestId("model-provider").selectOption("anthropic");
  const options = page.getByTestId("model-option");
  await expect(options).toHaveCount(2);
  await expect(options.nth(0)).toHaveAttribute("data-model", "fake-model");
  await expect(options.nth(0)).toContainText("takes images");
  await expect(options.nth(1)).toContainText("fake-model-text");
  await expect(options.nth(1)).toContainText("text only");
  expect(model.provider.modelLists()).toBeGreaterThan(0);
  // Typing narrows the list; a name not in it is still accepted (free text).
  await page.getByTestId("model-name").fill("text");
  await expect(options).toHaveCount(1);
  await options.first().click();
  await expect(page.getByTestId("model-name")).toHaveValue("fake-model-text");
  await expect(page.getByTestId("model-list-note")).toHaveText("fake-model-text: text only.");
  await page.getByTestId("model-save").click();
  await expect(picker).toHaveText("fake-model-text · Anthropic");
});

test("tokens and dollars per turn, and the session's total in the top bar", async ({ page, model }) => {
  await openNewSession(page);
  // fake-model has no price: tokens only.
  model.script(say("Unpriced.", { usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 } }));
  await send(page, "first");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Unpriced.");
  const usage = page.getByTestId("turn-usage");
  await expect(usage.last()).toContainText("100 in · 20 out · 0 cache read · 0 cache write · price unknown");
  await expect(page.getByTestId("session-cost")).toHaveText("120 tokens · price unknown");

  // claude-sonnet-4-5 is in the table: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
  await page.getByTestId("model-picker").click();
  await page.getByTestId("model-provider").selectOption("anthropic");
  await page.getByTestId("model-name").fill("claude-sonnet-4-5");
  await page.getByTestId("model-save").click();
  model.script(say("Priced.", { usage: { input: 1_000, output: 200, cacheRead: 5_000, cacheWrite: 800 } }));
  await send(page, "second");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Priced.");
  await expect(usage.last()).toContainText("1,000 in · 200 out · 5,000 cache read · 800 cache write · $0.0105");
  const total = page.getByTestId("session-cost");
  await expect(total).toHaveText("7.1K tokens · $0.0105 + price unknown for fake-model");
  await total.click();
  await expect(page.getByTestId("session-cost-detail")).toContainText(
    "1,100 in · 220 out · 5,000 cache read · 800 cache write",
  );

  // A reload reads the same figures back from the recorded requests.
  await page.reload();
  await expect(page.getByTestId("session-cost")).toHaveText("7.1K tokens · $0.0105 + price unknown for fake-model");
  await expect(page.getByTestId("turn-usage").last()).toContainText("$0.0105");
});

test("Ctrl+Tab walks the open editors in the order they were last used", async ({ page }) => {
  for (const f of ["one.txt", "two.txt", "three.txt"]) writeWorkspaceFile(f, `${f}\n`);
  await openNewSession(page);
  for (const f of ["one.txt", "two.txt", "three.txt"])
    await page.locator(`[data-testid="tree-item"][data-path="${f}"]`).click();
  const active = page.locator('[data-testid="editor-tab"][aria-selected="true"]');
  await expect(active).toHaveAttribute("data-path", "three.txt");

  // One press: the editor used before this one; again: back.
  await page.keyboard.press("Control+Tab");
  await expect(active).toHaveAttribute("data-path", "two.txt");
  await page.keyboard.press("Control+Tab");
  await expect(active).toHaveAttribute("data-path", "three.txt");

  // Held Ctrl: the list shows, each Tab walks further back, letting go opens the one offered.
  await page.keyboard.down("Control");
  await page.keyboard.press("Tab");
  const list = page.getByTestId("editor-mru");
  await expect(list).toBeVisible();
  await expect(list.getByTestId("editor-mru-item")).toHaveText([/three\.txt/, /two\.txt/, /one\.txt/]);
  await page.keyboard.press("Tab");
  await expect(list.locator('[aria-selected="true"]')).toHaveAttribute("data-path", "one.txt");
  await page.keyboard.up("Control");
  await expect(list).toHaveCount(0);
  await expect(active).toHaveAttribute("data-path", "one.txt");

  // Ctrl+Alt+Tab, for browsers that keep Ctrl+Tab for their own tabs.
  await page.keyboard.press("Control+Alt+Tab");
  await expect(active).toHaveAttribute("data-path", "three.txt");
});
