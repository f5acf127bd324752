// The IDE without the agent: tree, Monaco, saves, new/rename/delete, quick open, layouts, the PTY terminal.
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, shot, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

test("opens a file in Monaco with its language and saves edits through the runner", async ({ page }) => {
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(e.message));
  writeWorkspaceFile("src/greet.ts", "export function greet(name: string) {\n  return `hi ${name}`;\n}\n");
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="src"]').click();
  await page.locator('[data-testid="tree-item"][data-path="src/greet.ts"]').click();
  const editor = page.locator(".monaco-editor").first();
  await expect(editor).toBeVisible();
  await expect(editor.locator(".view-lines")).toContainText("export function greet");
  await expect(page.getByTestId("code-editor")).toHaveAttribute("data-language", "typescript");

  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("export const x = 1;");
  await expect(page.locator('[data-testid="editor-tab"][data-path="src/greet.ts"]')).toHaveAttribute(
    "data-dirty",
    "true",
  );
  await page.keyboard.press("Control+s");
  await expect(page.locator('[data-testid="editor-tab"][data-path="src/greet.ts"]')).toHaveAttribute(
    "data-dirty",
    "false",
  );
  expect(readFileSync(join(workspaceDir(), "src/greet.ts"), "utf8")).toContain("export const x = 1;");
  // The status line follows the cursor; a click on it goes to a line.
  await expect(page.getByTestId("editor-position")).toHaveText("Ln 4, Col 20");
  await expect(page.getByTestId("editor-status")).toContainText("TypeScript");
  await page.keyboard.press("Shift+Home");
  await expect(page.getByTestId("editor-position")).toHaveText("Ln 4, Col 1 (19 selected)");
  await page.getByTestId("editor-position").click();
  await page.keyboard.type("2");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("editor-position")).toHaveText("Ln 2, Col 1");
  await shot(page, "editor-saved");
  expect(errors.filter((e) => /worker/i.test(e))).toEqual([]);
});

test("a binary or non-UTF-8 file opens as a notice, not an editor, and nothing is written over it", async ({
  page,
}) => {
  const bytes = {
    "odd/blob.bin": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
    "odd/latin1.txt": Buffer.from("caf\xe9", "latin1"),
  };
  for (const [rel, data] of Object.entries(bytes)) writeWorkspaceFile(rel, data);
  writeWorkspaceFile("odd/plain.txt", "plain text\n");
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="odd"]').click();
  await page.locator('[data-testid="tree-item"][data-path="odd/plain.txt"]').click();
  await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("plain text");
  for (const [rel, message] of [
    ["odd/blob.bin", /binary file/],
    ["odd/latin1.txt", /not UTF-8/],
  ] as const) {
    await page.locator(`[data-testid="tree-item"][data-path="${rel}"]`).click();
    await expect(page.getByTestId("editor-unreadable")).toContainText(message);
    // The editor of the previous file is not shown under this tab, and keys typed go nowhere.
    await expect(page.locator(".monaco-editor").first()).toBeHidden();
    await page.keyboard.type("oops");
    await page.keyboard.press("Control+s");
    await expect(page.locator(`[data-testid="editor-tab"][data-path="${rel}"]`)).toHaveAttribute("data-dirty", "false");
  }
  await expect(page.getByTestId("conflict-banner")).toHaveCount(0);
  for (const [rel, data] of Object.entries(bytes))
    expect(readFileSync(join(workspaceDir(), rel)).equals(data)).toBe(true);
  // Back to a text file: the editor again.
  await page.locator('[data-testid="editor-tab"][data-path="odd/plain.txt"]').click();
  await expect(page.getByTestId("editor-unreadable")).toHaveCount(0);
  await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("plain text");
});

test("creates and renames in a name box inside the tree, explains a name it cannot use, deletes after asking", async ({
  page,
}) => {
  await openNewSession(page);
  const item = (path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
  const box = page.getByTestId("tree-name-input");
  await page.getByTestId("new-file").click();
  await expect(box).toBeFocused();
  await box.fill("notes.md");
  await box.press("Enter");
  await expect(item("notes.md")).toBeVisible();
  expect(existsSync(join(workspaceDir(), "notes.md"))).toBe(true);
  await expect(page.locator('[data-testid="editor-tab"][data-path="notes.md"]')).toBeVisible();
  // The new file has the keyboard: typing goes into it.
  await expect(page.locator(".monaco-editor").first()).toHaveClass(/\bfocused\b/);
  await page.keyboard.type("# Notes");
  await expect(page.locator('[data-testid="editor-tab"][data-path="notes.md"]')).toHaveAttribute("data-dirty", "true");
  await page.keyboard.press("Control+s");
  await expect(page.locator('[data-testid="editor-tab"][data-path="notes.md"]')).toHaveAttribute("data-dirty", "false");

  // A name in use is explained as it is typed, and Enter keeps the box; Escape leaves nothing made.
  await page.getByTestId("new-file").click();
  await box.fill("notes.md");
  await expect(page.getByTestId("tree-name-problem")).toContainText("notes.md already exists here");
  await box.press("Enter");
  await expect(box).toBeVisible();
  await box.fill("../outside.txt");
  await expect(page.getByTestId("tree-name-problem")).toContainText(". or ..");
  await box.press("Escape");
  await expect(box).toHaveCount(0);
  await expect(page.getByTestId("file-tree")).toBeFocused();

  // Rename starts with the name and its stem selected; "docs/" moves it into a new folder.
  await item("notes.md").click();
  await page.getByTestId("rename").click();
  await expect(box).toHaveValue("notes.md");
  expect(await box.evaluate((el: HTMLInputElement) => [el.selectionStart, el.selectionEnd])).toEqual([0, 5]);
  await box.fill("docs/notes.md");
  await box.press("Enter");
  await expect(item("docs")).toBeVisible();
  expect(existsSync(join(workspaceDir(), "docs/notes.md"))).toBe(true);
  await expect(page.locator('[data-testid="editor-tab"][data-path="docs/notes.md"]')).toBeVisible();

  // The context menu: a folder made inside the folder right-clicked, its box first in it.
  await item("docs").click({ button: "right" });
  const menu = page.getByTestId("tree-menu");
  await expect(menu.getByRole("menuitem")).toHaveText([
    "New File…",
    "New Folder…",
    "Upload Files…",
    "Rename…F2",
    "DeleteDel",
    "Copy Path",
  ]);
  await menu.getByRole("menuitem", { name: "New Folder…" }).click();
  await expect(menu).toHaveCount(0);
  await box.fill("drafts");
  await box.press("Enter");
  await expect(item("docs/drafts")).toBeVisible();
  expect(existsSync(join(workspaceDir(), "docs/drafts"))).toBe(true);
  await shot(page, "tree-menu");

  // Declining the confirmation keeps the folder; accepting deletes it.
  await item("docs").click();
  page.once("dialog", (d) => d.dismiss());
  await page.getByTestId("delete").click();
  expect(existsSync(join(workspaceDir(), "docs/notes.md"))).toBe(true);
  page.once("dialog", (d) => d.accept());
  await page.getByTestId("delete").click();
  await expect(item("docs")).toHaveCount(0);
  expect(existsSync(join(workspaceDir(), "docs"))).toBe(false);
});

test("unsaved edits are kept: through a rename, and leaving the page asks first", async ({ page }) => {
  // A folder of its own per run: the workspace outlives a test (--repeat-each).
  const dir = `draft-${Date.now().toString(36)}`;
  writeWorkspaceFile(`${dir}/plan.txt`, "step one\n");
  await openNewSession(page);
  await page.locator(`[data-testid="tree-item"][data-path="${dir}"]`).click();
  await page.locator(`[data-testid="tree-item"][data-path="${dir}/plan.txt"]`).click();
  const editor = page.locator(".monaco-editor").first();
  await expect(editor.locator(".view-lines")).toContainText("step one");
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("step two (unsaved)");
  await expect(page.locator(`[data-testid="editor-tab"][data-path="${dir}/plan.txt"]`)).toHaveAttribute(
    "data-dirty",
    "true",
  );

  await page.getByTestId("rename").click();
  await page.getByTestId("tree-name-input").fill("plan-v2.txt");
  await page.getByTestId("tree-name-input").press("Enter");
  const renamed = page.locator(`[data-testid="editor-tab"][data-path="${dir}/plan-v2.txt"]`);
  await expect(renamed).toHaveAttribute("data-dirty", "true");
  await expect(editor.locator(".view-lines")).toContainText("step two (unsaved)");
  expect(readFileSync(join(workspaceDir(), dir, "plan-v2.txt"), "utf8")).toBe("step one\n");

  const asked = new Promise<string>((resolve) => page.once("dialog", (d) => (resolve(d.type()), void d.dismiss())));
  await page.close({ runBeforeUnload: true });
  expect(await asked).toBe("beforeunload");
});

test("the tree works from the keyboard: arrows, Enter, F2 and Delete", async ({ page }) => {
  writeWorkspaceFile("kb/one.txt", "one\n");
  writeWorkspaceFile("kb/two.txt", "two\n");
  await openNewSession(page);
  const item = (path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
  await item("kb").click();
  await expect(item("kb")).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("file-tree")).toBeFocused();
  await page.keyboard.press("ArrowLeft");
  await expect(item("kb/one.txt")).toHaveCount(0);
  await page.keyboard.press("ArrowRight");
  await page.keyboard.press("ArrowRight");
  await expect(item("kb/one.txt")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowDown");
  await expect(item("kb/two.txt")).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="kb/two.txt"]')).toBeVisible();

  await page.getByTestId("file-tree").focus();
  await page.keyboard.press("F2");
  await expect(page.getByTestId("tree-name-input")).toBeFocused();
  // Keys typed in the box are the name's, not the tree's (Delete, arrows).
  await page.keyboard.press("Delete");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.type("three");
  await page.keyboard.press("Enter");
  await expect(item("kb/three.txt")).toBeVisible();
  expect(existsSync(join(workspaceDir(), "kb/three.txt"))).toBe(true);
  page.once("dialog", (d) => d.accept());
  await page.keyboard.press("Delete");
  await expect(item("kb/three.txt")).toHaveCount(0);
  expect(existsSync(join(workspaceDir(), "kb/three.txt"))).toBe(false);
  expect(existsSync(join(workspaceDir(), "kb/one.txt"))).toBe(true);
});

test("search in files: results by file, options, and a result opened from the keyboard with its match selected", async ({
  page,
}) => {
  writeWorkspaceFile("find/haystack.ts", `${"// filler\n".repeat(80)}export const needleValue = 42;\n`);
  writeWorkspaceFile("find/notes.md", "A Needle in the notes.\n");
  writeWorkspaceFile("find/ignored/.gitignore", "*.log\n");
  writeWorkspaceFile("find/ignored/out.log", "needle in a log\n");
  await openNewSession(page);
  await page.keyboard.press("Control+Shift+F");
  const query = page.getByTestId("search-query");
  await expect(query).toBeFocused();
  await query.fill("needle");
  await expect(page.getByTestId("search-summary")).toHaveText("2 results in 2 files");
  await expect(page.getByTestId("search-file")).toHaveCount(2);
  await expect(page.locator('[data-testid="search-match"][data-path="find/notes.md"] mark')).toHaveText("Needle");

  // Match case, then a glob, then a regex; a bad regex says why.
  await page.getByTestId("search-case").click();
  await expect(page.getByTestId("search-summary")).toHaveText("1 result in 1 file");
  await query.fill("NEEDLE");
  await expect(page.getByTestId("search-summary")).toHaveText("No results.");
  await page.getByTestId("search-case").click();
  await query.fill("needle");
  await page.getByTestId("search-glob").fill("*.md");
  await expect(page.getByTestId("search-summary")).toHaveText("1 result in 1 file");
  await page.getByTestId("search-glob").fill("");
  await page.getByTestId("search-regex").click();
  await query.fill("needle(Value");
  await expect(page.getByTestId("search-summary")).toContainText(/unclosed|regex/i);
  await query.fill("needle\\w+ = \\d+");
  await expect(page.getByTestId("search-summary")).toHaveText("1 result in 1 file");
  await shot(page, "search");

  // From the query, Down walks the results (file row, then its match); Enter opens the match.
  await query.press("ArrowDown");
  await expect(page.locator('[data-testid="search-file"][data-path="find/haystack.ts"]')).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(page.locator('[data-testid="search-match"][data-path="find/haystack.ts"]')).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="find/haystack.ts"]')).toHaveAttribute(
    "aria-selected",
    "true",
  );
  // Line 81 is in view with the match selected: typing replaces exactly the match.
  const editor = page.locator(".monaco-editor").first();
  await expect(editor.locator(".view-lines")).toContainText("export const needleValue = 42;");
  await page.keyboard.type("renamed = 7");
  await expect(editor.locator(".view-lines")).toContainText("export const renamed = 7;");

  // Back to the tree, where it was left, and to the search, which kept its results.
  await page.keyboard.press("Control+Shift+E");
  await expect(page.locator('[data-testid="tree-item"][data-path="find"]')).toBeVisible();
  await page.getByTestId("side-search").click();
  await expect(page.getByTestId("search-summary")).toHaveText("1 result in 1 file");
  await expect(query).toHaveValue("needle\\w+ = \\d+");
});

test("quick open, remembered tabs and pane sizes, terminal toggle", async ({ page }) => {
  writeWorkspaceFile("lib/alpha.js", "module.exports = 'alpha';\n");
  writeWorkspaceFile("lib/beta.json", '{ "beta": true }\n');
  await openNewSession(page);
  await page.getByTestId("pane-editor").click();
  await page.keyboard.press("Control+p");
  // Enter at once, as a person who knows the name does: the workspace's listing may still be on
  // its way, and the box opens the first match when it comes.
  await page.getByTestId("quick-open").locator("input").fill("beta");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="lib/beta.json"]')).toBeVisible();
  // The explorer reveals the opened file: its folder opens.
  await expect(page.locator('[data-testid="tree-item"][data-path="lib"]')).toHaveAttribute("aria-expanded", "true");
  await expect(page.locator('[data-testid="tree-item"][data-path="lib/beta.json"]')).toBeVisible();
  await page.keyboard.press("Control+p");
  await page.getByTestId("quick-open").locator("input").fill("alpha");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"]')).toHaveCount(2);
  // Nothing typed: recently opened files first, the open one after, so Enter goes back. A
  // pointer left still where the list appears does not move the selection (it did, and Enter
  // then opened whatever row came up under it).
  await page.keyboard.press("Control+p");
  const second = (await page.getByTestId("quick-item").nth(1).boundingBox())!;
  await page.keyboard.press("Escape");
  await page.mouse.move(second.x + 20, second.y + second.height / 2);
  await page.keyboard.press("Control+p");
  await expect(page.getByTestId("quick-item").nth(0)).toHaveText("lib/beta.json");
  await expect(page.getByTestId("quick-item").nth(1)).toHaveText("lib/alpha.js");
  await expect(page.getByTestId("quick-item").nth(0)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page.locator('[data-testid="editor-tab"][data-path="lib/beta.json"]')).toHaveAttribute(
    "aria-selected",
    "true",
  );

  const files = page.getByTestId("pane-files");
  const before = (await files.boundingBox())!.width;
  const split = page.getByTestId("split-files");
  const box = (await split.boundingBox())!;
  await page.mouse.move(box.x + 2, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(box.x + 102, box.y + 200, { steps: 5 });
  await page.mouse.up();
  await expect.poll(async () => Math.round((await files.boundingBox())!.width)).toBe(Math.round(before + 100));

  await page.reload();
  await expect(page.locator('[data-testid="editor-tab"]')).toHaveCount(2);
  await expect(page.locator('[data-testid="editor-tab"][aria-selected="true"]')).toHaveAttribute(
    "data-path",
    "lib/beta.json",
  );
  await expect
    .poll(async () => Math.round((await page.getByTestId("pane-files").boundingBox())!.width))
    .toBe(Math.round(before + 100));

  // Ctrl+` from the editor goes to the open terminal; from the terminal it hides it and
  // gives the editor its focus back; once more shows it again.
  await page.locator(".monaco-editor textarea").first().focus();
  await page.keyboard.press("Control+`");
  await expect(page.getByTestId("pane-terminal")).toBeVisible();
  await expect
    .poll(() => page.evaluate(() => !!document.activeElement?.closest('[data-testid="pane-terminal"]')))
    .toBe(true);
  await page.keyboard.press("Control+`");
  await expect(page.getByTestId("pane-terminal")).toBeHidden();
  await expect.poll(() => page.evaluate(() => !!document.activeElement?.closest(".monaco-editor"))).toBe(true);
  await page.keyboard.press("Control+`");
  await expect(page.getByTestId("pane-terminal")).toBeVisible();

  // A middle click closes a tab without selecting it first.
  await page.locator('[data-testid="editor-tab"][data-path="lib/beta.json"]').click({ button: "middle" });
  await expect(page.locator('[data-testid="editor-tab"]')).toHaveCount(1);
  await expect(page.locator('[data-testid="editor-tab"][aria-selected="true"]')).toHaveAttribute(
    "data-path",
    "lib/alpha.js",
  );
});

test("terminal round trip on a runner PTY, surviving a reload with its scrollback", async ({ page }) => {
  await openNewSession(page);
  const term = page.getByTestId("pane-terminal");
  await expect(term).toHaveAttribute("data-state", "open");
  await term.click();
  await page.keyboard.type("echo e2e-$((20+22)) && export MARK=kept\n");
  await expect(term.locator(".xterm-rows")).toContainText("e2e-42");
  // The shell is exactly as wide as the screen (else readline garbles every wrapped line).
  await page.keyboard.type("echo cols=$(tput cols)\n");
  await expect(term.locator(".xterm-rows")).toContainText(/cols=\d+/);
  const shell = await term.locator(".xterm-rows").evaluate((el) => /cols=(\d+)/.exec(el.textContent!)![1]);
  expect((await term.getByTestId("xterm").getAttribute("data-size"))?.split("x")[0]).toBe(shell);
  await shot(page, "terminal");
  await page.reload();
  const again = page.getByTestId("pane-terminal");
  await expect(again).toHaveAttribute("data-state", "open");
  // The same shell: the scrollback is back and the variable is still set.
  await expect(again.locator(".xterm-rows")).toContainText("e2e-42");
  await again.click();
  await page.keyboard.type("echo mark=$MARK\n");
  await expect(again.locator(".xterm-rows")).toContainText("mark=kept");
});

test("links in terminal output: Ctrl+click opens a workspace file at its line, a local address in the preview", async ({
  page,
}) => {
  const dir = `links-${Date.now().toString(36)}`;
  writeWorkspaceFile(`${dir}/main.ts`, "one\ntwo\nthree\nfour\n");
  await openNewSession(page);
  const term = page.getByTestId("pane-terminal");
  await expect(term).toHaveAttribute("data-state", "open");
  // Only files the workspace has become links: wait until the tree knows this one.
  await expect(page.locator(`[data-testid="tree-item"][data-path="${dir}"]`)).toBeVisible();
  await term.click();
  await page.keyboard.type(
    `printf '%s\\n' '${dir}/main.ts:3:2 - error TS1005' 'not/a/file.ts:1:1' 'Local: http://localhost:8123/docs'\n`,
  );
  await expect(term.locator(".xterm-rows")).toContainText("Local: http://localhost:8123/docs");
  /** Where `needle` starts in the last terminal row that shows it as output (not the command);
   *  null while xterm has not drawn that row (a loaded machine redraws its rows late). */
  const find = (needle: string) =>
    page.evaluate((needle) => {
      const rows = [...document.querySelectorAll('[data-testid="pane-terminal"] .xterm-rows > div')].reverse();
      const row = rows.find((r) => r.textContent?.includes(needle) && !r.textContent.includes("printf"));
      if (!row) return null;
      const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
      let skip = row.textContent!.indexOf(needle);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const length = node.textContent!.length;
        if (skip < length) {
          const range = document.createRange();
          range.setStart(node, skip);
          range.setEnd(node, skip + 1);
          const r = range.getBoundingClientRect();
          return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
        }
        skip -= length;
      }
      return null;
    }, needle);
  const at = async (needle: string, point: Awaited<ReturnType<typeof find>> = null) => {
    await expect.poll(async () => (point = await find(needle)), { message: `${needle} drawn` }).not.toBeNull();
    return point!;
  };
  const ctrlClick = async (needle: string, offset = 3) => {
    const p = await at(needle);
    const x = p.x + offset * 7;
    await page.mouse.move(x, p.y);
    await page.waitForTimeout(150);
    await page.keyboard.down("Control");
    await page.mouse.click(x, p.y);
    await page.keyboard.up("Control");
  };

  // A path that is not a workspace file is not a link.
  await ctrlClick("not/a/file.ts");
  await page.waitForTimeout(300);
  await expect(page.getByTestId("editor-tab")).toHaveCount(0);

  await ctrlClick(`${dir}/main.ts:3:2`);
  await expect(page.locator(`[data-testid="editor-tab"][data-path="${dir}/main.ts"]`)).toBeVisible();
  await expect(page.getByTestId("editor-position")).toHaveText("Ln 3, Col 2");

  await ctrlClick("http://localhost:8123/docs", 8);
  await expect(page.getByTestId("pane-preview")).toBeVisible();
  await expect(page.getByTestId("preview-port")).toHaveValue("8123");
  await expect(page.getByTestId("preview-path")).toHaveValue("/docs");
});

test("terminals in tabs: each its own shell, kept while hidden and across a reload, closed for good", async ({
  page,
}) => {
  test.setTimeout(120_000); // 10 s of its shells' sleeps and a reload: 28 s quiet, past 60 s busy
  await openNewSession(page);
  const pane = page.getByTestId("pane-terminal");
  await expect(pane).toHaveAttribute("data-state", "open");
  const visibleRows = pane.locator(".xterm-rows:visible");
  await pane.click();
  await page.keyboard.type("export WHO=first; sleep 1; echo late-$WHO\n");
  // A second terminal (the key VS Code uses) while the first is still busy.
  await page.keyboard.press("Control+Shift+Backquote");
  await expect(page.getByTestId("terminal-tab")).toHaveCount(2);
  await expect(page.getByTestId("terminal-tab").nth(1)).toHaveAttribute("data-state", "open");
  await page.keyboard.type("echo second-$((40+2)) WHO=$WHO.\n");
  await expect(visibleRows).toContainText("second-42 WHO=.");
  await expect(visibleRows).not.toContainText("late-first");

  // The first kept running while hidden: its output is there when it is shown again.
  await page.getByTestId("terminal-tab").nth(0).click();
  await expect(visibleRows).toContainText("late-first");
  await expect(visibleRows).not.toContainText("second-42");

  // While the reloaded page shows the first tab, the second's shell reads its own size: a hidden
  // view once attached at 10×6 and shrank the shell every page shares.
  const size = (await pane.locator("[data-testid=xterm]:visible").getAttribute("data-size"))!.split("x");
  await page.getByTestId("terminal-tab").nth(1).click();
  await pane.click();
  await page.keyboard.type("T=$(tty); (sleep 4; stty -F $T size > hidden-size.txt) &\n");
  await page.getByTestId("terminal-tab").nth(0).click();
  await page.reload();
  await expect(page.getByTestId("terminal-tab")).toHaveCount(2);
  // Typed only once the shell is attached again (its scrollback is back), or the keys are lost.
  await expect(visibleRows).toContainText("late-first");
  await pane.click();
  await page.keyboard.type("sleep 5; echo size-$(cat hidden-size.txt | tr ' ' x)\n");
  await expect(visibleRows).toContainText(`size-${size[1]}x${size[0]}`, { timeout: 15_000 });
  await page.getByTestId("terminal-tab").nth(1).click();
  await expect(page.getByTestId("terminal-tab").nth(1)).toHaveAttribute("data-state", "open");
  await expect(visibleRows).toContainText("second-42");

  // Closing ends that shell; the other stays. Closing the last leaves a fresh one.
  await page.getByTestId("terminal-close").nth(1).click();
  await expect(page.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(visibleRows).toContainText("late-first");
  await page.getByTestId("terminal-close").first().click();
  await expect(page.getByTestId("terminal-tab")).toHaveCount(1);
  await expect(page.getByTestId("terminal-tab").first()).toHaveAttribute("data-state", "open");
  await expect(visibleRows).not.toContainText("late-first");
  await shot(page, "terminal-tabs");

  // The IDE's keys work with the cursor in a terminal: xterm does not send them to the shell.
  await pane.click();
  await page.keyboard.press("Control+Shift+F");
  await expect(page.getByTestId("search-query")).toBeFocused();
  await pane.click();
  await page.keyboard.press("Control+Alt+KeyP");
  await expect(page.getByTestId("pane-preview")).toBeVisible();
  await expect(visibleRows).not.toContainText("^[");
});
