// `@` in the message box: the workspace's files that match, chosen with the keyboard or the
// mouse, go into the message as `@path`, and reach the model as written.
import { expect, openNewSession, say, test, writeWorkspaceFile } from "./fixtures";

test("@ lists matching workspace files; Enter puts @path in the message, Esc closes the list", async ({
  page,
  model,
}) => {
  writeWorkspaceFile("mentions/parser.ts", "export {};\n");
  writeWorkspaceFile("mentions/printer.ts", "export {};\n");
  model.script(say("Looking at it."));
  await openNewSession(page);
  await expect(page.locator('[data-testid="tree-item"][data-path="mentions"]')).toBeVisible();
  const composer = page.getByTestId("composer");
  const list = page.getByTestId("mention-list");
  await composer.click();
  await page.keyboard.type("fix @menpar");
  await expect(list.getByTestId("mention-item").first()).toHaveText("mentions/parser.ts");
  await page.keyboard.press("Enter");
  await expect(composer).toHaveValue("fix @mentions/parser.ts ");
  await expect(list).toBeHidden();

  // Esc closes the list and leaves the text; the word typed on stays unlisted.
  await page.keyboard.type("and @print");
  await expect(list).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(list).toBeHidden();
  await page.keyboard.type("er");
  await expect(list).toBeHidden();
  await expect(composer).toHaveValue("fix @mentions/parser.ts and @printer");

  // A click chooses too.
  await composer.fill("");
  await page.keyboard.type("see @printer");
  await list.getByTestId("mention-item").first().click();
  await expect(composer).toHaveValue("see @mentions/printer.ts ");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("msg-user")).toHaveText(["see @mentions/printer.ts"]);
  await expect(page.getByTestId("msg-assistant")).toHaveText("Looking at it.");
  expect(JSON.stringify(model.provider.requests.at(-1)?.body)).toContain("see @mentions/printer.ts");
});
