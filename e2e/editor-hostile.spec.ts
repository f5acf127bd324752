// Monaco against file content the agent wrote: links in every scheme that could run script or
// drive the editor (`javascript:`, `data:`, `command:`), in an HTML file (whose language service
// makes links of hrefs), in plain text (Monaco's own link finder) and in a JSDoc hover's markdown,
// and a line of a megabyte. Ctrl+click and the hover's links must run no script, navigate no
// window and run no editor command; only an http(s) address opens, in a new tab of its own.
// Monaco's default opener sets `location.href` for any scheme it does not open itself, so what
// keeps this safe is that nothing hands it such a link: this spec pins that down.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, openNewSession, test, writeWorkspaceFile } from "./fixtures";

test("ctrl+click and hover links in a hostile file run no script, command or navigation", async ({ page }) => {
  const hits: string[] = [];
  const sink = createServer((req, res) => void (hits.push(req.url ?? ""), res.end("ok")));
  await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
  const web = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const bad = [
    "javascript:alert(1)",
    " JaVaScRiPt:alert(2)",
    "data:text/html,<script>alert(3)</script>",
    "command:editor.action.selectAll",
    "vbscript:msgbox(4)",
  ];
  writeWorkspaceFile(
    "hostile-editor/links.html",
    [...bad.map((h, i) => `<a href="${h}">bad${i}</a>`), `<a href="${web}/html-link">web</a>`].join("\n") + "\n",
  );
  writeWorkspaceFile("hostile-editor/links.txt", [...bad, `${web}/text-link`].join("\n") + "\n");
  writeWorkspaceFile(
    "hostile-editor/hover.ts",
    [
      "/**",
      ...bad.map((h, i) => ` * [bad${i}](${h}) {@link ${h}}`),
      ' * <img src="x" onerror="alert(5)"> <a href="javascript:alert(6)">raw</a>',
      " */",
      "export const hovered = 1;",
      "export const use = hovered;",
      "",
    ].join("\n"),
  );
  writeWorkspaceFile("hostile-editor/long.txt", `${"javascript:alert(7) ".repeat(50_000)}\n`);

  const dialogs: string[] = [];
  page.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
  try {
    await openNewSession(page);
    const ide = page.url();
    let tabs = 0;
    page.context().on("page", () => tabs++);
    const editor = page.locator(".monaco-editor").first();
    const open = async (name: string, text: string) => {
      const item = page.locator(`[data-testid="tree-item"][data-path="hostile-editor/${name}"]`);
      if (!(await item.isVisible()))
        await page.locator('[data-testid="tree-item"][data-path="hostile-editor"]').click();
      await item.click();
      await expect(editor.locator(".view-lines")).toContainText(text);
    };
    // By the mouse at the text's place: Monaco redraws a link under a held Ctrl, and a locator's
    // click would wait for it to settle.
    const ctrlClick = async (text: string) => {
      const box = (await editor.locator(".view-line span", { hasText: text }).last().boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.keyboard.down("Control");
      await page.mouse.down();
      await page.mouse.up();
      await page.keyboard.up("Control");
      await page.waitForTimeout(400);
    };

    for (const [name, webText] of [
      ["links.html", "html-link"],
      ["links.txt", "text-link"],
    ]) {
      await open(name, webText);
      // Only the web address is a link; then every spelling is Ctrl+clicked all the same.
      await expect(editor.locator(".detected-link").first()).toBeVisible({ timeout: 10_000 });
      for (const link of await editor.locator(".detected-link").allTextContents())
        expect(`${web}/${webText}`).toContain(link);
      for (const text of ["alert(1)", "alert(2)", "alert(3)", "selectAll", "msgbox(4)"]) await ctrlClick(text);
      expect(page.url()).toBe(ide);
      // command:editor.action.selectAll did not run.
      await expect(editor.locator(".selected-text")).toHaveCount(0);
      const [tab] = await Promise.all([page.context().waitForEvent("page"), ctrlClick(webText)]);
      await tab.waitForLoadState();
      expect(tab.url()).toBe(`${web}/${webText}`);
      // Opened without a way back to the IDE's window.
      expect(await tab.evaluate(() => window.opener)).toBeNull();
      await tab.close();
    }

    await open("hover.ts", "export const use");
    const hover = page.locator(".monaco-hover").filter({ hasText: "bad0" }).first();
    // A hover asked before the TypeScript worker knows the file finds nothing and is not asked
    // again until the pointer moves, as a person would move it: off the word and back.
    await expect(async () => {
      await editor.locator(".view-line span", { hasText: "export" }).first().hover();
      await editor.locator(".view-line span", { hasText: "hovered" }).last().hover();
      await expect(hover).toBeVisible({ timeout: 5_000 });
    }).toPass({ timeout: 30_000 });
    const hrefs = await hover
      .locator("a")
      .evaluateAll((as) => as.map((a) => `${a.getAttribute("href") ?? ""} ${a.getAttribute("data-href") ?? ""}`));
    for (const href of hrefs) expect(href).not.toMatch(/javascript:|vbscript:|data:|command:/i);
    expect(await hover.locator("img, script, iframe").count()).toBe(0);
    for (const link of await hover.locator("a").all()) {
      if (!(await link.isVisible())) continue;
      await link.click();
      await page.waitForTimeout(200);
      await editor.locator(".view-line span", { hasText: "hovered" }).last().hover();
    }
    expect(page.url()).toBe(ide);

    await open("long.txt", "javascript:alert(7)");
    await ctrlClick("alert(7)");
    expect(page.url()).toBe(ide);
    // The page still answers: the tree opens another file.
    await open("links.txt", "text-link");

    expect(dialogs).toEqual([]);
    expect(tabs).toBe(2);
    // The two tabs asked for their icon too.
    expect(hits.filter((h) => h !== "/favicon.ico").sort()).toEqual(["/html-link", "/text-link"]);
  } finally {
    sink.close();
  }
});
