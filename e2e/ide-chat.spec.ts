// The agent in the IDE, against the real server, runner and pipeline with the fake provider:
// full turn with an approval, reject with a message, spilled output viewer, a long change read
// whole before approving it, the agent editing
// an open file, an edit's tool card showing the file's real diff (asked or not, after a reload),
// reloads mid-turn and mid-approval, two tabs answering once, Esc to stop.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  call,
  card,
  expect,
  openNewSession,
  say,
  send,
  shot,
  test,
  workspaceDir,
  writeWorkspaceFile,
} from "./fixtures";

test("a full turn: read, a command approved in its card with streamed output, the final answer", async ({
  page,
  model,
}) => {
  writeWorkspaceFile("data.txt", "hello from the workspace\n");
  model.script(
    call("read_file", { path: "data.txt" }),
    call("shell", { command: "for i in 1 2 3; do echo line-$i; sleep 0.4; done" }),
    say("The file says **hello** and the loop printed three lines.", {
      usage: { input: 120, output: 30, cacheRead: 100 },
    }),
  );
  await openNewSession(page);
  await send(page, "Read data.txt, then run the loop.");
  await expect(card(page, "read_file")).toHaveAttribute("data-status", "succeeded");
  const approval = page.getByTestId("approval-card");
  await expect(approval).toHaveAttribute("data-state", "pending");
  await expect(approval.getByTestId("approval-command")).toContainText("for i in 1 2 3");
  await expect(card(page, "shell")).toHaveAttribute("data-status", "awaiting_approval");
  await shot(page, "approval-pending");
  await approval.getByTestId("approve-once").click();
  await expect(
    card(page, "shell").getByTestId("tool-progress").or(card(page, "shell").getByTestId("tool-output")),
  ).toContainText("line-1");
  await expect(card(page, "shell")).toHaveAttribute("data-status", "succeeded");
  await expect(card(page, "shell").getByTestId("tool-output")).toContainText("line-3");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("The file says hello");
  await expect(page.getByTestId("msg-assistant").last().locator("strong")).toHaveText("hello");
  await expect(page.getByTestId("turn-usage").last()).toContainText("cache read");
  await shot(page, "turn-finished");
});

test("a rejection with a message reaches the model", async ({ page, model }) => {
  model.script(call("shell", { command: "rm -rf build" }), say("Understood, I will use git clean."));
  await openNewSession(page);
  await send(page, "Clean the build folder.");
  const approval = page.getByTestId("approval-card");
  await expect(approval).toHaveAttribute("data-state", "pending");
  await approval.getByTestId("reject-message").fill("use git clean -fdx instead");
  await approval.getByTestId("reject").click();
  await expect(card(page, "shell")).toHaveAttribute("data-status", "rejected");
  await expect(page.getByTestId("msg-assistant").last()).toContainText("git clean");
  const last = model.provider.requests[model.provider.requests.length - 1];
  expect(last.raw).toContain("use git clean -fdx instead");
});

test("a spilled result opens in the full-output viewer and pages through it", async ({ page, model }) => {
  model.script(call("shell", { command: "seq 1 40000" }), say("Printed 40000 numbers."));
  await openNewSession(page);
  await send(page, "Print many numbers.");
  await expect(card(page, "shell")).toHaveAttribute("data-status", "succeeded");
  await card(page, "shell").getByTestId("view-full-output").click();
  const viewer = page.getByTestId("spill-viewer");
  // The shell keeps at most 200,000 bytes of a command's output: that is what was spilled.
  await expect(viewer.getByTestId("spill-range")).toContainText(/bytes 0–65,536 of 2\d\d,\d{3}$/);
  await expect(viewer.getByTestId("spill-text")).toContainText("\n2\n3\n");
  await shot(page, "spill-viewer");
  await viewer.getByTestId("spill-next").click();
  await expect(viewer.getByTestId("spill-range")).toContainText("bytes 65,536");
  await page.keyboard.press("Escape");
  await expect(viewer).toBeHidden();
});

test("a change longer than its card shows is read whole before it is approved", async ({ page, model }) => {
  const rows = Array.from({ length: 600 }, (_, i) => `row ${i} ${"y".repeat(40)}`).join("\n");
  model.script(
    call("write_file", { path: "approved-whole.txt", content: `${rows}\nTHE LAST LINE\n` }),
    say("Wrote it."),
  );
  await openNewSession(page);
  await send(page, "Write a long file.");
  const approval = page.getByTestId("approval-card");
  await expect(approval).toHaveAttribute("data-state", "pending");
  await expect(approval.getByTestId("diff-text")).toContainText(/more characters\)/);
  await expect(approval.getByTestId("diff-text")).not.toContainText("THE LAST LINE");
  await approval.getByTestId("approval-whole-change").click();
  const viewer = page.getByTestId("spill-viewer");
  await expect(viewer.getByTestId("spill-range")).toContainText(/bytes 0–(2\d),\d{3} of \1,\d{3}$/);
  await expect(viewer.getByTestId("spill-text")).toContainText("+THE LAST LINE");
  // Escape closes the viewer and leaves the card's answer to the person.
  await page.keyboard.press("Escape");
  await expect(viewer).toBeHidden();
  await expect(approval).toHaveAttribute("data-state", "pending");
  await approval.getByTestId("approve-once").click();
  await expect(card(page, "write_file")).toHaveAttribute("data-status", "succeeded");
  expect(readFileSync(join(workspaceDir(), "approved-whole.txt"), "utf8")).toContain("THE LAST LINE");
});

test("the agent editing an open file updates the editor, and unsaved edits get a diff instead", async ({
  page,
  model,
}) => {
  // Monaco's own complaints while diff editors come and go (a model disposed under its widget).
  const monacoErrors: string[] = [];
  page.on("pageerror", (e) => monacoErrors.push(String(e)));
  page.on(
    "console",
    (m) => void (m.type() === "error" && /TextModel|DiffEditor/.test(m.text()) && monacoErrors.push(m.text())),
  );
  writeWorkspaceFile("edit-me.ts", "export const answer = 1;\n");
  await openNewSession(page);
  await page.locator('[data-testid="tree-item"][data-path="edit-me.ts"]').click();
  await expect(page.getByTestId("code-editor").locator(".view-lines")).toContainText("answer = 1");
  model.script(
    call("read_file", { path: "edit-me.ts" }),
    call("edit_file", { path: "edit-me.ts", old_string: "answer = 1", new_string: "answer = 42" }),
    say("Changed it to 42."),
  );
  await send(page, "Make the answer 42.");
  // Edits ask first; the card shows the diff it would make.
  const pending = page.locator('[data-testid="approval-card"][data-state="pending"]');
  await expect(pending.getByTestId("diff-text")).toContainText("answer = 42");
  await pending.getByTestId("approve-once").click();
  await expect(page.getByTestId("code-editor").locator(".view-lines")).toContainText("answer = 42");
  await expect(card(page, "edit_file").getByTestId("edit-diff")).toHaveAttribute("data-source", "applied");
  await expect(card(page, "edit_file").getByTestId("edit-diff")).toContainText("+export const answer = 42;");

  // Now with unsaved edits: the agent's change must not overwrite them.
  await page.getByTestId("code-editor").locator(".view-lines").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("// mine");
  model.script(
    call("read_file", { path: "edit-me.ts" }),
    call("edit_file", { path: "edit-me.ts", old_string: "answer = 42", new_string: "answer = 7" }),
    say("Now 7."),
  );
  await send(page, "Make it 7.");
  await pending.getByTestId("approve-once").click();
  await expect(page.getByTestId("conflict-banner")).toBeVisible();
  await expect(page.getByTestId("code-editor").locator(".view-lines")).toContainText("// mine");
  await page.getByTestId("conflict-diff").click();
  await expect(page.getByTestId("conflict-diff-view").locator(".monaco-diff-editor")).toBeVisible();
  await shot(page, "conflict-diff");
  await page.getByTestId("conflict-take-disk").click();
  await expect(page.getByTestId("code-editor").locator(".view-lines")).toContainText("answer = 7");
  expect(readFileSync(join(workspaceDir(), "edit-me.ts"), "utf8")).toContain("answer = 7");
  await expect(page.getByTestId("conflict-diff-view")).toBeHidden();
  expect(monacoErrors).toEqual([]);
});

test("an edit's tool card shows the file's real diff with its line numbers, asked or not, and after a reload", async ({
  page,
  model,
}) => {
  const lines = (n: number, at: Record<number, string> = {}) =>
    Array.from({ length: n }, (_, i) => at[i + 1] ?? `const v${i + 1} = ${i + 1};`).join("\n") + "\n";
  writeWorkspaceFile("numbers.ts", lines(40));
  model.script(
    call("read_file", { path: "numbers.ts" }),
    call("edit_file", { path: "numbers.ts", old_string: "const v21 = 21;", new_string: "const v21 = 2100;" }),
    call("edit_file", { path: "numbers.ts", old_string: "const v33 = 33;", new_string: "const v33 = 3300;" }),
    say("Changed two lines."),
  );
  await openNewSession(page);
  await send(page, "Change v21 and v33.");
  const pending = page.locator('[data-testid="approval-card"][data-state="pending"]');
  await expect(pending.getByTestId("diff-text")).toContainText("@@ -18,7 +18,7 @@");
  // Approved for the session: the second edit runs without a card of its own.
  await pending.getByTestId("approve-session").click();
  await expect(page.getByTestId("msg-assistant").last()).toContainText("Changed two lines.");
  const edits = page.locator('[data-testid="tool-card"][data-tool="edit_file"]');
  await expect(edits).toHaveCount(2);
  await expect(page.getByTestId("approval-card")).toHaveCount(1);
  const check = async () => {
    const asked = edits.nth(0).getByTestId("edit-diff");
    await expect(asked).toHaveAttribute("data-source", "applied");
    await expect(asked).toContainText("@@ -18,7 +18,7 @@");
    // The file's own numbers in the gutter: the changed line is 21 on both sides, not 1.
    await expect(asked.locator('[data-kind="del"]')).toContainText("21-const v21 = 21;");
    await expect(asked.locator('[data-kind="add"]')).toContainText("21+const v21 = 2100;");
    await expect(asked.locator('[data-kind="ctx"]').first().getByTestId("diff-new-line")).toHaveText("18");
    const unasked = edits.nth(1).getByTestId("edit-diff");
    await expect(unasked).toHaveAttribute("data-source", "applied");
    await expect(unasked).toContainText("@@ -30,7 +30,7 @@");
    await expect(unasked.locator('[data-kind="add"]').getByTestId("diff-new-line")).toHaveText("33");
    // One diff per edit: the answered approval card no longer repeats it.
    await expect(page.getByTestId("diff-text")).toHaveCount(2);
  };
  await check();
  await shot(page, "edit-real-diff");
  await page.reload();
  await check();
  expect(readFileSync(join(workspaceDir(), "numbers.ts"), "utf8")).toBe(
    lines(40, { 21: "const v21 = 2100;", 33: "const v33 = 3300;" }),
  );
  // A file tool's card opens its file in the editor (an edit at the line it changed).
  await expect(
    page.locator('[data-testid="tool-card"][data-tool="read_file"]').getByTestId("tool-open-file"),
  ).toBeVisible();
  await edits.nth(1).getByTestId("tool-open-file").click();
  await expect(page.locator('[data-testid="editor-tab"][data-path="numbers.ts"]')).toHaveAttribute(
    "aria-selected",
    "true",
  );
  await expect(page.locator(".monaco-editor .view-lines").first()).toContainText("const v33 = 3300;");
  await shot(page, "tool-open-file");
  // The click opened the file and did not fold the card.
  await expect(edits.nth(1).getByTestId("edit-diff")).toBeVisible();
});

test("reloading mid-approval and mid-stream loses and duplicates nothing; two tabs answer once", async ({
  page,
  context,
  model,
}) => {
  model.script(
    call("shell", { command: "echo ran >> ran.txt" }),
    say("First part of a slow answer, then the rest arrives.", { deltaChars: 2, delayMs: 40 }),
  );
  const sessionId = await openNewSession(page);
  await send(page, "Append to ran.txt.");
  await expect(page.getByTestId("approval-card")).toHaveAttribute("data-state", "pending");
  await page.reload();
  await expect(page.getByTestId("approval-card")).toHaveAttribute("data-state", "pending");
  await expect(page.getByTestId("msg-user")).toHaveCount(1);

  const other = await context.newPage();
  await other.goto(`/s/${sessionId}`);
  await expect(other.getByTestId("approval-card")).toHaveAttribute("data-state", "pending");
  // Both tabs answer at once; whichever loses finds the card already answered.
  await Promise.all([
    page
      .getByTestId("approve-once")
      .click({ timeout: 5000 })
      .catch(() => {}),
    other
      .getByTestId("approve-once")
      .click({ timeout: 5000 })
      .catch(() => {}),
  ]);
  await expect(card(page, "shell")).toHaveAttribute("data-status", "succeeded");
  await expect(card(other, "shell")).toHaveAttribute("data-status", "succeeded");
  expect(readFileSync(join(workspaceDir(), "ran.txt"), "utf8")).toBe("ran\n");
  // The command's new file reaches the tree through the session's files.changed event.
  await expect(page.locator('[data-testid="tree-item"][data-path="ran.txt"]')).toBeVisible();

  // Reload while the answer is still streaming: the rebuilt page shows it once, in full.
  await expect(page.getByTestId("msg-assistant").last()).toContainText("First part");
  await page.reload();
  await expect(page.getByTestId("msg-assistant").last()).toHaveText(
    "First part of a slow answer, then the rest arrives.",
  );
  await expect(page.getByTestId("msg-assistant")).toHaveCount(1);
  await expect(page.getByTestId("tool-card")).toHaveCount(1);
  await expect(page.getByTestId("stop")).toBeHidden();
  await other.close();
});

test("Esc stops a running turn", async ({ page, model }) => {
  model.script(say("This answer never finishes streaming because the provider stalls.", { hangAfterBytes: 600 }));
  await openNewSession(page);
  await send(page, "Say something long.");
  await expect(page.getByTestId("stop")).toBeVisible();
  await page.getByTestId("chat-log").click();
  await page.keyboard.press("Escape");
  await expect(page.getByTestId("stop")).toBeHidden();
  await expect(page.getByTestId("turn-usage").last()).toContainText("cancelled");
});

test("a session is named by its first message, renamed in place, and deleted from home, not while it runs", async ({
  page,
  model,
}) => {
  model.script(say("Sure.", { hangAfterBytes: 300 }), say("Done."));
  const sessionId = await openNewSession(page);
  await expect(page.getByTestId("session-title")).toHaveText(/^Session \d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
  await send(page, "Add a dark mode toggle\nto the settings page");
  await expect(page.getByTestId("session-title")).toHaveText("Add a dark mode toggle");

  await page.getByTestId("session-title").click();
  await page.getByTestId("session-title-input").fill("Dark mode");
  await page.getByTestId("session-title-input").press("Enter");
  await expect(page.getByTestId("session-title")).toHaveText("Dark mode");
  // Esc gives up an edit.
  await page.getByTestId("session-title").click();
  await page.getByTestId("session-title-input").fill("Not this");
  await page.getByTestId("session-title-input").press("Escape");
  await expect(page.getByTestId("session-title")).toHaveText("Dark mode");

  // The turn is still running (the provider stalls): home refuses to delete it, and says why.
  await page.goto("/");
  const item = page.locator(`[data-testid="session-item"][data-id="${sessionId}"]`);
  await expect(item).toContainText("Dark mode");
  page.once("dialog", (d) => d.accept());
  await item.getByTestId("session-delete").click();
  await expect(page.getByTestId("remove-error")).toContainText("Stop it first");
  await page.goto(`/s/${sessionId}`);
  await page.getByTestId("stop").click();
  await expect(page.getByTestId("stop")).toBeHidden();
  // Up in the empty composer brings the last message back.
  await page.getByTestId("composer").click();
  await page.keyboard.press("ArrowUp");
  await expect(page.getByTestId("composer")).toHaveValue("Add a dark mode toggle\nto the settings page");

  await page.goto("/");
  page.once("dialog", (d) => d.dismiss());
  await item.getByTestId("session-delete").click();
  await expect(item).toBeVisible();
  page.once("dialog", (d) => d.accept());
  await item.getByTestId("session-delete").click();
  await expect(item).toHaveCount(0);
  await page.goto(`/s/${sessionId}`);
  await expect(page.getByText(`No session ${sessionId}.`)).toBeVisible();
});

test("the session's model is chosen under the composer and reaches the provider from the next message", async ({
  page,
  model,
}) => {
  await openNewSession(page);
  const picker = page.getByTestId("model-picker");
  await expect(picker).toHaveText("fake-model · Anthropic (default)");
  await picker.click();
  const provider = page.getByTestId("model-provider");
  // The e2e server has no OpenAI-compatible API configured: offered with what to set, not choosable.
  await expect(provider.locator('option[value="openai"]')).toBeDisabled();
  await expect(provider.locator('option[value="openai"]')).toContainText("set OPENAI_API_KEY or OPENAI_BASE_URL");
  await provider.selectOption("anthropic");
  await expect(page.getByTestId("model-name")).toHaveAttribute("placeholder", /fake-model/);
  await page.getByTestId("model-name").fill("claude-chosen-1");
  await shot(page, "model-picker");
  await page.getByTestId("model-save").click();
  await expect(page.getByTestId("model-form")).toHaveCount(0);
  await expect(picker).toHaveText("claude-chosen-1 · Anthropic");

  const before = model.provider.requests.length;
  model.script(say("Answered by the chosen model."));
  await send(page, "Which model?");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Answered by the chosen model.");
  expect(model.provider.requests.slice(before).map((r) => r.body.model)).toEqual(["claude-chosen-1"]);

  // Kept with the session; back to the server's default from the same form.
  await page.reload();
  await expect(picker).toHaveText("claude-chosen-1 · Anthropic");
  // A click elsewhere closes the form and changes nothing.
  await picker.click();
  await provider.selectOption("");
  await page.getByTestId("chat-log").click();
  await expect(page.getByTestId("model-form")).toHaveCount(0);
  await expect(picker).toHaveText("claude-chosen-1 · Anthropic");
  await picker.click();
  await provider.selectOption("");
  await expect(page.getByTestId("model-name")).toBeDisabled();
  await page.getByTestId("model-save").click();
  await expect(picker).toHaveText("fake-model · Anthropic (default)");
});
