// The terminal against output a program the agent wrote prints: an OSC 8 hyperlink, whose text
// may look like anything (a file of the workspace) and whose address is another site. It opens
// as every terminal link does, on Ctrl+click and in a new tab, and its hover names where it
// leads; a plain click opens nothing and raises no dialog (xterm's own handler put a confirm()
// in front of the whole IDE on a plain click).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, openNewSession, test } from "./fixtures";

test("an OSC 8 hyperlink opens only on Ctrl+click, naming its address, with no dialog", async ({ page, context }) => {
  const hits: string[] = [];
  const sink = createServer((req, res) => void (hits.push(req.url ?? ""), res.end("ok")));
  await new Promise<void>((r) => sink.listen(0, r));
  // Another site, as far as the IDE can tell (Chromium resolves every *.localhost to loopback).
  const url = `http://osc8.localhost:${(sink.address() as AddressInfo).port}/osc8`;
  const dialogs: string[] = [];
  page.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));

  await openNewSession(page);
  const pane = page.getByTestId("pane-terminal");
  await expect(pane).toHaveAttribute("data-state", "open");
  await pane.locator(".xterm").click();
  // The link's text is joined by printf, so the typed command line does not show it whole.
  await page.keyboard.type(`printf '\\e]8;;${url}\\e\\\\%s%s\\e]8;;\\e\\\\\\n' src/ notes.ts\n`);
  const row = pane.locator(".xterm-rows > div", { hasText: /^src\/notes\.ts\s*$/ });
  await expect(row).toHaveCount(1);

  // xterm's screen layer takes the pointer over its rows: the mouse goes to the row's place.
  const box = (await row.boundingBox())!;
  const [x, y] = [box.x + 12, box.y + box.height / 2];
  await page.mouse.move(x, y);
  await expect(pane.getByTestId("xterm")).toHaveAttribute("title", `Open ${url} (Ctrl+click)`);
  await page.mouse.click(x, y);
  await page.waitForTimeout(500);
  expect(dialogs).toEqual([]);
  expect(hits).toEqual([]);
  expect(context.pages()).toHaveLength(1);

  const opened = context.waitForEvent("page");
  await page.keyboard.down("ControlOrMeta");
  await page.mouse.click(x, y);
  await page.keyboard.up("ControlOrMeta");
  await (await opened).waitForLoadState();
  await expect.poll(() => hits).toEqual(["/osc8"]);
  expect(dialogs).toEqual([]);
  sink.close();
});

test("a repeat count past the screen does not hold the page", async ({ page }) => {
  await openNewSession(page);
  const pane = page.getByTestId("pane-terminal");
  await expect(pane).toHaveAttribute("data-state", "open");
  await pane.locator(".xterm").click();
  // Insert lines, delete lines, scroll, repeat a character, tab forward: each once per count in
  // xterm, which froze the page for hours; a count inside the screen still works.
  const counts = ["L", "M", "S", "T", "b", "I"].map((f) => `\\e[2147483647${f}`).join("");
  await page.keyboard.type(`printf 'x\\e[3b|${counts}\\n'; echo after-$((40+2))\n`);
  const rows = pane.locator(".xterm-rows");
  await expect(rows).toContainText("after-42", { timeout: 10_000 });
  await expect(rows).toContainText("xxxx|");
});
