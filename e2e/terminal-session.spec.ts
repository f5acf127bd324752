// Terminals belong to the session: a second page of the session shows the same terminal tabs,
// attached to the same shells with their scrollback, as does a reload; a terminal opened or
// closed in one page is opened or closed in the other; an ended one says why in every page;
// the idle limit (how long they run with no page open) is shown.
import { expect, openNewSession, shot, test } from "./fixtures";

test("a second page and a reload attach to the session's running terminals with their scrollback", async ({
  page,
  context,
}) => {
  const sessionId = await openNewSession(page);
  const pane = page.getByTestId("pane-terminal");
  await expect(pane).toHaveAttribute("data-state", "open");
  await pane.locator(".xterm").click();
  await page.keyboard.type("echo marker-$RANDOM; export SAME=shell-kept\n");
  const rows = pane.locator(".xterm-rows:visible");
  await expect(rows).toContainText(/marker-\d+/);
  const marker = (await rows.textContent())!.match(/marker-\d+/)![0];
  const term = await page.getByTestId("terminal-tab").first().getAttribute("data-term");

  // The same session in another page: the same tab, the marker in its scrollback, the same shell.
  const other = await context.newPage();
  await other.goto(`/s/${sessionId}`);
  const otherPane = other.getByTestId("pane-terminal");
  await expect(otherPane).toHaveAttribute("data-state", "open");
  await expect(other.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(other.getByTestId("terminal-tab").first()).toHaveAttribute("data-term", term!);
  const otherRows = otherPane.locator(".xterm-rows:visible");
  await expect(otherRows).toContainText(marker);
  await otherPane.locator(".xterm").click();
  await other.keyboard.type("echo same-$SAME\n");
  await expect(otherRows).toContainText("same-shell-kept");
  // Both pages are attached at once: what one types shows in the other.
  await expect(rows).toContainText("same-shell-kept");
  await shot(other, "terminal-second-page");

  // A reload of the second page: the same again.
  await other.reload();
  await expect(other.getByTestId("pane-terminal")).toHaveAttribute("data-state", "open");
  await expect(other.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(other.getByTestId("terminal-tab").first()).toHaveAttribute("data-term", term!);
  await expect(other.getByTestId("pane-terminal").locator(".xterm-rows:visible")).toContainText(marker);

  // How long terminals outlive their pages is shown.
  await expect(page.getByTestId("terminal-idle")).toHaveText("kept 3 min without a page"); // the suite's QUIVER_TERMINAL_IDLE_MINUTES

  // A terminal opened in one page is a tab in the other; one that ends says why in both.
  await other.getByTestId("terminal-new").click();
  await expect(page.getByTestId("terminal-tab")).toHaveCount(2);
  await expect(other.getByTestId("terminal-tab").nth(1)).toHaveAttribute("data-state", "open");
  await other.keyboard.type("exit 3\n");
  for (const p of [page, other]) {
    await expect(p.getByTestId("terminal-tab").nth(1)).toHaveAttribute("data-state", "ended");
    await expect(p.getByTestId("terminal-tab").nth(1).getByTestId("terminal-ended")).toHaveText("exited with code 3");
  }
  await expect(other.getByTestId("pane-terminal").locator(".xterm-rows:visible")).toContainText(
    "exited with code 3; press Enter for a new shell",
  );
  // × on the ended tab removes it for both pages; the first terminal runs on.
  await other.getByTestId("terminal-close").nth(1).click();
  await expect(page.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(other.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(page.getByTestId("terminal-tab").first()).toHaveAttribute("data-state", "open");

  // The first page goes away: the shell keeps running for the other.
  await page.close();
  await other.getByTestId("pane-terminal").locator(".xterm").click();
  await other.keyboard.type("echo still-$SAME\n");
  await expect(other.getByTestId("pane-terminal").locator(".xterm-rows:visible")).toContainText("still-shell-kept");
});
