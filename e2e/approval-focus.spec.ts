// Approval cards never take the keyboard: a person typing in the terminal or the editor while a
// card appears keeps typing there (Enter included) and answers nothing; the card pulses, a
// notice says it waits, and Ctrl+Alt+A goes to it, where Enter approves. A new card takes no
// answer for its first half second (buttons disabled) so a click aimed at what was there
// before cannot answer it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { call, expect, openNewSession, say, send, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

const pending = (page: Page) => page.locator('[data-testid="approval-card"][data-state="pending"]');

/** Records, in the page, how each approval card looked the moment it was inserted and when it armed. */
async function watchCards(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Array<{ disabledAtMount: boolean; mountedAt: number; armedAt?: number }> = [];
    (window as unknown as { cardLog: typeof seen }).cardLog = seen;
    const known = new WeakMap<Element, (typeof seen)[number]>();
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('[data-testid="approval-card"][data-state="pending"]')) {
        let rec = known.get(el);
        if (!rec) {
          rec = {
            disabledAtMount:
              (el.querySelector('[data-testid="approve-once"]') as HTMLButtonElement | null)?.disabled ?? false,
            mountedAt: performance.now(),
          };
          known.set(el, rec);
          seen.push(rec);
        }
        if (rec.armedAt === undefined && el.getAttribute("data-armed") === "true") rec.armedAt = performance.now();
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["data-armed"] });
  });
}

/** Types `lines` one at a time (each ending in Enter) until a pending card shows, then `after` more. */
async function typeThrough(page: Page, line: (i: number) => string, after: number): Promise<number> {
  let i = 0;
  let extra = -1;
  while (extra < after) {
    await page.keyboard.type(line(i++), { delay: 15 });
    await page.keyboard.press("Enter");
    if (extra >= 0) extra++;
    else if ((await pending(page).count()) > 0) extra = 0;
    if (i > 400) throw new Error("no approval card appeared");
  }
  return i;
}

test("a card appearing while the person types in the terminal or the editor takes neither focus nor an answer", async ({
  page,
  model,
}) => {
  const dir = `focus-${Date.now().toString(36)}`;
  writeWorkspaceFile(`${dir}/typing.txt`, "start\n");
  // Slow streams: the cards appear while the person is typing.
  model.script(
    { ...call("shell", { command: "touch STOLEN_FOCUS_APPROVED" }), delayMs: 150, deltaChars: 4 },
    { ...call("write_file", { path: `${dir}/written.txt`, content: "by the agent\n" }), delayMs: 150, deltaChars: 4 },
    say("Done."),
  );
  await openNewSession(page);
  await watchCards(page);
  await send(page, "Touch a file, then write one.");

  // 1. Typing in the terminal, Enter after every line, while the shell card appears.
  const term = page.getByTestId("pane-terminal");
  await expect(term).toHaveAttribute("data-state", "open");
  await term.locator(".xterm").click();
  const typed = await typeThrough(page, (i) => `echo typed-${i}`, 6);
  await expect(term.locator(".xterm-rows")).toContainText(`typed-${typed - 1}`);
  expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="pane-terminal"]'))).toBe(true);
  await expect(pending(page)).toHaveCount(1);
  await expect(pending(page).getByTestId("approval-command")).toHaveText("touch STOLEN_FOCUS_APPROVED");
  expect(existsSync(join(workspaceDir(), "STOLEN_FOCUS_APPROVED"))).toBe(false);
  // Announced without focus: the live region and the notice.
  await expect(page.getByTestId("approval-announce")).toContainText("Approval needed: ");
  await expect(page.getByTestId("approval-announce")).toContainText("Ctrl+Alt+A");
  await expect(page.getByTestId("approval-notice")).toContainText("An approval is waiting");
  await shot(page, "approval-announced");

  // The card was inserted with its buttons off, and armed about half a second later.
  const log = await page.evaluate(
    () =>
      (window as unknown as { cardLog: Array<{ disabledAtMount: boolean; mountedAt: number; armedAt?: number }> })
        .cardLog,
  );
  expect(log).toHaveLength(1);
  expect(log[0].disabledAtMount).toBe(true);
  expect(log[0].armedAt! - log[0].mountedAt).toBeGreaterThan(400);

  // 2. The jump key goes to the card; Enter there approves.
  await page.keyboard.press("Control+Alt+KeyA");
  await expect(pending(page)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="tool-card"][data-tool="shell"]')).toHaveAttribute(
    "data-status",
    "succeeded",
  );
  expect(existsSync(join(workspaceDir(), "STOLEN_FOCUS_APPROVED"))).toBe(true);

  // 3. Typing in the editor while the write_file card appears.
  await page.locator(`[data-testid="tree-item"][data-path="${dir}"]`).click();
  await page.locator(`[data-testid="tree-item"][data-path="${dir}/typing.txt"]`).click();
  const editor = page.getByTestId("code-editor");
  await expect(editor.locator(".view-lines")).toContainText("start");
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  // Lines of punctuation only, one symbol per digit: the editor suggests words, and Enter would
  // take a suggestion instead of making a new line.
  const word = (i: number) => `@${[...String(i).padStart(3, "0")].map((d) => "!#$%&*+-=~"[Number(d)]).join("")}`;
  const lines = await typeThrough(page, word, 6);
  await expect(pending(page)).toHaveCount(1);
  await expect(pending(page)).toHaveAttribute("data-armed", "true");
  expect(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="code-editor"]'))).toBe(true);
  // Every line landed in the editor, in order, the last ones typed after the card showed.
  await expect(editor.locator(".view-lines")).toContainText(
    [word(lines - 3), word(lines - 2), word(lines - 1)].join(""),
  );
  expect(existsSync(join(workspaceDir(), dir, "written.txt"))).toBe(false);

  // 4. A click on the notice does what the key does.
  await page.getByTestId("approval-notice").click();
  await expect(pending(page)).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Done.");
  expect(readFileSync(join(workspaceDir(), dir, "written.txt"), "utf8")).toBe("by the agent\n");
  await expect(page.getByTestId("approval-notice")).toHaveCount(0);
});
