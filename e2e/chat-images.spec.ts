// Images in chat messages, against the real server and pipeline with the fake provider: pasted,
// dropped or picked images show as thumbnails in the message box (✕ removes one), go to the
// model with the message, stay in its bubble after a reload and open full size; a file that
// cannot go is refused in the composer, the typed text kept; a queued message keeps its
// images, and Retry sends them again.
import type { Page } from "@playwright/test";
import { expect, openNewSession, say, shot, test } from "./fixtures";

interface Picked {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

/** A real PNG of `w`×`h` pixels of one colour, drawn by the page's canvas. */
async function png(page: Page, name: string, colour: string, w = 12, h = 8): Promise<Picked> {
  const base64 = await page.evaluate(
    async ([c, width, height]) => {
      const canvas = Object.assign(document.createElement("canvas"), { width, height });
      const g = canvas.getContext("2d")!;
      g.fillStyle = c;
      g.fillRect(0, 0, width, height);
      const blob = await new Promise<Blob>((done) => canvas.toBlob((b) => done(b!), "image/png"));
      return btoa(String.fromCharCode(...new Uint8Array(await blob.arrayBuffer())));
    },
    [colour, w, h] as const,
  );
  return { name, mimeType: "image/png", buffer: Buffer.from(base64, "base64") };
}

/** Ctrl+V of images: a paste event on the message box carrying them as files. */
async function paste(page: Page, files: Picked[]): Promise<void> {
  await page.getByTestId("composer").evaluate(
    (el, fs) => {
      const dt = new DataTransfer();
      for (const f of fs)
        dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name, { type: f.mimeType }));
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
    },
    files.map((f) => ({ name: f.name, mimeType: f.mimeType, b64: f.buffer.toString("base64") })),
  );
}

/** The last user message of the model's latest request, as sent. */
function lastUserMessage(model: { provider: { requests: { body: Record<string, unknown> }[] } }): string {
  const messages = (model.provider.requests.at(-1)?.body.messages ?? []) as { role: string }[];
  return JSON.stringify(messages.findLast((m) => m.role === "user"));
}

test("pasted images: ✕ removes one, the rest go to the model, stay after a reload and open full size", async ({
  page,
  model,
}) => {
  model.script(say("A red rectangle."));
  await openNewSession(page);
  const red = await png(page, "red.png", "#e00000");
  const blue = await png(page, "blue.png", "#0000e0");
  await paste(page, [red, blue]);
  const drafts = page.getByTestId("draft-image");
  await expect(drafts).toHaveCount(2);
  await expect(drafts.first()).toHaveAttribute("title", `red.png · ${red.buffer.length} B`);
  await shot(page, "images-attached");
  await drafts.nth(1).getByTestId("draft-image-remove").click();
  await expect(drafts).toHaveCount(1);

  await page.getByTestId("composer").fill("What is in this picture?");
  await page.getByTestId("composer").press("Enter");
  const bubble = page.getByTestId("msg-user").last();
  await expect(bubble).toHaveText("What is in this picture?");
  await expect(bubble.getByTestId("msg-image")).toHaveCount(1);
  await expect(bubble.getByTestId("msg-image")).toHaveAttribute("data-state", "loaded");
  await expect(page.getByTestId("draft-images")).toBeHidden();
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("A red rectangle.");
  // The model got the kept image's exact bytes with the text, and not the removed one.
  const sent = lastUserMessage(model);
  expect(sent).toContain(red.buffer.toString("base64"));
  expect(sent).toContain("image/png");
  expect(sent).toContain("What is in this picture?");
  expect(JSON.stringify(model.provider.requests.map((r) => r.body))).not.toContain(blue.buffer.toString("base64"));

  await page.reload();
  const again = page.getByTestId("msg-user").last().getByTestId("msg-image");
  await expect(again).toHaveAttribute("data-state", "loaded");
  await expect(again.locator("img")).toHaveAttribute("src", `data:image/png;base64,${red.buffer.toString("base64")}`);
  await again.click();
  const box = page.getByTestId("image-lightbox");
  await expect(box).toBeVisible();
  await expect(box).toContainText("12 × 8 · PNG image");
  await shot(page, "images-lightbox");
  await page.keyboard.press("Escape");
  await expect(box).toBeHidden();
  await again.click();
  await box.click();
  await expect(box).toBeHidden();
});

test("a file that cannot go is refused in the composer, the typed text kept; a dropped image is attached", async ({
  page,
  model,
}) => {
  model.script(say("Two screenshots, no words."));
  await openNewSession(page);
  const composer = page.getByTestId("composer");
  await composer.fill("keep this text");
  const input = page.getByTestId("attach-input");
  await input.setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("not a picture\n") });
  const error = page.getByTestId("attach-error");
  await expect(error).toHaveText("Not attached: notes.txt is not a PNG, JPEG, GIF or WebP image.");
  const huge = Buffer.alloc(4 * 1024 * 1024);
  (await png(page, "x.png", "#000")).buffer.copy(huge);
  await input.setInputFiles({ name: "huge.png", mimeType: "image/png", buffer: huge });
  await expect(error).toHaveText("Not attached: huge.png is 4 MB; an image may be at most 3.75 MB.");
  await expect(page.getByTestId("draft-image")).toHaveCount(0);
  await expect(composer).toHaveValue("keep this text");
  await shot(page, "images-refused");

  // Picked with the paperclip, then dropped on the chat: both attached, the error gone.
  await input.setInputFiles(await png(page, "picked.png", "#00a000"));
  await expect(page.getByTestId("draft-image")).toHaveCount(1);
  await expect(error).toBeHidden();
  const dropped = await png(page, "dropped.png", "#a0a000");
  await page.getByTestId("chat-log").evaluate((el, b64) => {
    const dt = new DataTransfer();
    dt.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], "dropped.png", { type: "image/png" }));
    el.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
    el.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, dropped.buffer.toString("base64"));
  await expect(page.getByTestId("draft-image")).toHaveCount(2);

  // Images alone are a message.
  await composer.fill("");
  await page.getByTestId("send").click();
  await expect(page.getByTestId("msg-user").last().getByTestId("msg-image")).toHaveCount(2);
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Two screenshots, no words.");
  expect(lastUserMessage(model)).toContain(dropped.buffer.toString("base64"));
});

test("a message queued during a turn keeps its images, and Retry sends them again", async ({ page, model }) => {
  model.script(
    say("Looking at the first request slowly, long enough to queue another message with a picture.", {
      deltaChars: 4,
      delayMs: 600,
    }),
    { kind: "http_error", status: 400, message: "scripted rejection" },
    say("Seen it this time."),
  );
  await openNewSession(page);
  const composer = page.getByTestId("composer");
  await composer.fill("first");
  await composer.press("Enter");
  await expect(page.getByTestId("stop")).toBeVisible();
  const shotPng = await png(page, "shot.png", "#00c0c0");
  await paste(page, [shotPng]);
  await expect(page.getByTestId("draft-image")).toHaveCount(1);
  await composer.fill("and this one");
  await composer.press("Enter");
  const queued = page.getByTestId("queued-message");
  await expect(queued.getByTestId("queued-text")).toHaveText("and this one");
  await expect(queued.getByTestId("draft-image")).toHaveAttribute("title", `shot.png · ${shotPng.buffer.length} B`);
  // Gone from the message box (only the queued message's thumbnail, without ✕, is left).
  await expect(page.getByTestId("draft-image")).toHaveCount(1);
  await expect(page.getByTestId("draft-image-remove")).toHaveCount(0);

  await expect(page.getByTestId("msg-user")).toHaveCount(2, { timeout: 30_000 });
  await expect(page.getByTestId("msg-user").last().getByTestId("msg-image")).toHaveAttribute("data-state", "loaded");
  await expect(page.getByTestId("turn-usage").last()).toContainText("failed");
  expect(lastUserMessage(model)).toContain(shotPng.buffer.toString("base64"));

  // Retry names the images already in the session instead of uploading them again.
  const before = model.provider.requests.length;
  const resent = page.waitForRequest((r) => r.url().includes("turns.send") && r.method() === "POST");
  await page.getByTestId("retry-turn").click();
  const body = (await resent).postData() ?? "";
  expect(body).toContain("attachmentId");
  expect(body).not.toContain(shotPng.buffer.toString("base64"));
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("Seen it this time.");
  await expect(page.getByTestId("msg-user")).toHaveCount(3);
  await expect(page.getByTestId("msg-user").last()).toHaveText("and this one");
  await expect(page.getByTestId("msg-user").last().getByTestId("msg-image")).toHaveAttribute("data-state", "loaded");
  expect(model.provider.requests.length).toBe(before + 1);
  expect(lastUserMessage(model)).toContain(shotPng.buffer.toString("base64"));
});
