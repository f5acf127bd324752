// Each pane border moves the pane beside it: the file tree's handle resizes the tree (not the
// preview), the editor/preview border has a handle of its own that resizes the preview, and the
// chat's and the terminal's handles resize theirs.
import type { Locator, Page } from "@playwright/test";
import { expect, openNewSession, test } from "./fixtures";

const width = async (l: Locator) => (await l.boundingBox())!.width;
const height = async (l: Locator) => (await l.boundingBox())!.height;

async function drag(page: Page, handle: Locator, dx: number, dy = 0): Promise<void> {
  const box = (await handle.boundingBox())!;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx, y + dy, { steps: 6 });
  await page.mouse.up();
}

test("dragging each handle resizes the pane beside it and no other", async ({ page }) => {
  // Wide enough that every pane can grow while the editor keeps its 400 px (layout/pane-layout.ts).
  await page.setViewportSize({ width: 1920, height: 1080 });
  await openNewSession(page);
  await page.getByTestId("toggle-preview").click();
  const files = page.getByTestId("pane-files");
  const preview = page.getByTestId("pane-preview");
  const chat = page.getByTestId("pane-chat");
  const terminal = page.getByTestId("pane-terminal");
  await expect(preview).toBeVisible();
  await expect(page.getByTestId("split-preview")).toBeVisible();

  // The preview's handle sits on the editor/preview border, not over the tree's.
  const treeHandle = (await page.getByTestId("split-files").boundingBox())!;
  const previewHandle = (await page.getByTestId("split-preview").boundingBox())!;
  const previewBox = (await preview.boundingBox())!;
  expect(Math.abs(previewHandle.x + previewHandle.width - previewBox.x)).toBeLessThanOrEqual(2);
  expect(previewHandle.x - treeHandle.x).toBeGreaterThan(100);

  const before = {
    files: await width(files),
    preview: await width(preview),
    chat: await width(chat),
    term: await height(terminal),
  };
  await drag(page, page.getByTestId("split-files"), 60);
  await expect.poll(() => width(files)).toBeCloseTo(before.files + 60, -1);
  expect(await width(preview)).toBeCloseTo(before.preview, 0);
  expect(await width(chat)).toBeCloseTo(before.chat, 0);

  const files2 = await width(files);
  await drag(page, page.getByTestId("split-preview"), -80);
  await expect.poll(() => width(preview)).toBeCloseTo(before.preview + 80, -1);
  expect(await width(files)).toBeCloseTo(files2, 0);
  expect(await width(chat)).toBeCloseTo(before.chat, 0);

  const preview2 = await width(preview);
  await drag(page, page.getByTestId("split-chat"), -50);
  await expect.poll(() => width(chat)).toBeCloseTo(before.chat + 50, -1);
  expect(await width(preview)).toBeCloseTo(preview2, 0);
  expect(await width(files)).toBeCloseTo(files2, 0);

  await drag(page, page.getByTestId("split-terminal"), 0, -40);
  await expect.poll(() => height(terminal)).toBeCloseTo(before.term + 40, -1);
  expect(await width(preview)).toBeCloseTo(preview2, 0);
});
