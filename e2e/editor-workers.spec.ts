// Monaco's workers on an IDE page loaded by its address: such a page is cross-origin isolated
// (COEP, for the WebContainer), and a dedicated worker whose script comes without a COEP of its
// own is blocked there, leaving Monaco to warn and run without TypeScript's features.
import { expect, openNewSession, test, writeWorkspaceFile } from "./fixtures";

test("Monaco's workers run from this server on the isolated IDE page: TypeScript marks an unsaved type error", async ({
  page,
}) => {
  const problems: string[] = [];
  page.on("console", (m) => /worker/i.test(m.text()) && problems.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  // Requests the reload cuts short (ERR_ABORTED) are no problem; a blocked script is.
  page.on("requestfailed", (r) => {
    const why = r.failure()?.errorText ?? "";
    if (why !== "net::ERR_ABORTED") problems.push(`${r.url()}: ${why}`);
  });
  writeWorkspaceFile("typed.ts", "export const total: number = 1;\n");
  await openNewSession(page);
  // Loaded by address (a reload, a link, a new tab), not by navigation from home, the IDE's
  // document carries the isolation headers.
  await page.reload();
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  // The pane's idle-time warm-up ends only once the TypeScript worker answers.
  await expect(page.getByTestId("code-editor")).toHaveAttribute("data-warm", "done", { timeout: 20_000 });
  await page.locator('[data-testid="tree-item"][data-path="typed.ts"]').click();
  const editor = page.getByTestId("code-editor");
  await expect(editor.locator(".view-lines")).toContainText("export const total");
  await expect(editor.locator(".squiggly-error")).toHaveCount(0);
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type('export const label: number = "text";');
  // Not saved: only the page's own TypeScript worker knows this text (the runner's language
  // server reads the saved file).
  await expect(editor.locator(".squiggly-error")).toHaveCount(1, { timeout: 15_000 });
  await expect(page.locator('[data-testid="editor-tab"][data-path="typed.ts"]')).toHaveAttribute("data-dirty", "true");
  expect(problems).toEqual([]);
});
