// Files the editor cannot take as text: an image shows as a picture with its size, and any file
// can be downloaded from the tree's menu with its exact bytes.
import { readFileSync } from "node:fs";
import { expect, openNewSession, test, writeWorkspaceFile } from "./fixtures";

// A real 2×3 red RGBA PNG.
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000002000000030806000000b9eade810000001149444154789c63f8cfc0f01f8419301800a1790bf54dc49a070000000049454e44ae426082",
  "hex",
);

test("an image opens as a picture with its size, and the tree's menu downloads a file's exact bytes", async ({
  page,
}) => {
  writeWorkspaceFile("img/dot.png", PNG);
  await openNewSession(page);
  const item = (path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
  await item("img").click();
  await item("img/dot.png").click();
  await expect(page.getByTestId("image-preview").locator("img")).toBeVisible();
  await expect(page.getByTestId("image-info")).toHaveText(`2 × 3 · ${PNG.length} B`);
  expect(
    await page
      .getByTestId("image-preview")
      .locator("img")
      .evaluate((img: HTMLImageElement) => img.naturalWidth),
  ).toBe(2);

  await item("img/dot.png").click({ button: "right" });
  const downloading = page.waitForEvent("download");
  await page.getByRole("menuitem", { name: "Download" }).click();
  const file = await downloading;
  expect(file.suggestedFilename()).toBe("dot.png");
  expect(readFileSync(await file.path())).toEqual(PNG);
});
