// Files from the person's computer: Upload Files… in the tree's menu puts them in the folder it
// was opened on with their exact bytes, a name already taken asks first, and files dropped on
// the tree land in the folder under the pointer.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, openNewSession, test, workspaceDir, writeWorkspaceFile } from "./fixtures";

const BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 250, 255, 13, 10]);

test.afterEach(() => {
  for (const dir of ["upl", "dropped.txt"]) rmSync(join(workspaceDir(), dir), { recursive: true, force: true });
});

test("Upload Files… puts files in the folder with their exact bytes, asking before it replaces one", async ({
  page,
}) => {
  writeWorkspaceFile("upl/readme.txt", "uploads go here\n");
  await openNewSession(page);
  const item = (path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
  const uploadInto = async (folder: string, files: { name: string; mimeType: string; buffer: Buffer }[]) => {
    await item(folder).click({ button: "right" });
    const choosing = page.waitForEvent("filechooser");
    await page.getByRole("menuitem", { name: "Upload Files…" }).click();
    await (await choosing).setFiles(files);
  };
  await uploadInto("upl", [
    { name: "logo.bin", mimeType: "application/octet-stream", buffer: BYTES },
    { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("first\n") },
  ]);
  await expect(item("upl/notes.txt")).toBeVisible();
  await expect(item("upl/logo.bin")).toBeVisible();
  expect(readFileSync(join(workspaceDir(), "upl/logo.bin"))).toEqual(BYTES);

  // Taken: dismissed, the file stays; accepted, it is replaced.
  page.once("dialog", (d) => void d.dismiss());
  await uploadInto("upl/readme.txt", [{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("second\n") }]);
  await expect(page.getByTestId("uploading")).toBeHidden();
  expect(readFileSync(join(workspaceDir(), "upl/notes.txt"), "utf8")).toBe("first\n");
  let asked = "";
  page.once("dialog", (d) => ((asked = d.message()), void d.accept()));
  await uploadInto("upl/readme.txt", [{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("second\n") }]);
  await expect.poll(() => readFileSync(join(workspaceDir(), "upl/notes.txt"), "utf8")).toBe("second\n");
  expect(asked).toBe("upl/notes.txt already exists. Replace it?");
});

test("files dropped on the tree land in the folder under the pointer, or at the root", async ({ page }) => {
  writeWorkspaceFile("upl/inner/keep.txt", "x\n");
  await openNewSession(page);
  const item = (path: string) => page.locator(`[data-testid="tree-item"][data-path="${path}"]`);
  const dropOn = (target: string, name: string, text: string) =>
    page
      .locator(target)
      .first()
      .evaluate(
        (el, [n, t]) => {
          const dt = new DataTransfer();
          dt.items.add(new File([t], n));
          el.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
          el.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
        },
        [name, text],
      );
  await item("upl").click();
  await dropOn(`[data-testid="tree-item"][data-path="upl/inner"]`, "into-inner.txt", "inner\n");
  await expect(item("upl/inner/into-inner.txt")).toBeVisible();
  expect(readFileSync(join(workspaceDir(), "upl/inner/into-inner.txt"), "utf8")).toBe("inner\n");
  await dropOn(`[data-testid="file-tree"]`, "dropped.txt", "root\n");
  await expect(item("dropped.txt")).toBeVisible();
  expect(readFileSync(join(workspaceDir(), "dropped.txt"), "utf8")).toBe("root\n");
});
