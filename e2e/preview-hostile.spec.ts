// The live preview against the app it shows, which the agent wrote and may make hostile: from
// inside the pane's frame it must not navigate the IDE's window (by script, link, form or a popup
// reaching back through `opener`, with or without a click), open popups without a click, read
// the IDE's cookies, storage or API, steer the pane with forged location messages, or read the
// preview of another session through its host. Every hostile page is served by a real server in
// the workspace's terminal, through the real runner; a stand-in for the attacker's server on this
// machine counts what reaches it.
// Chromium's popup blocker is on here (Playwright turns it off by default): a popup without a
// click must be refused as in a person's browser.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { expect, openNewSession, test, writeWorkspaceFile } from "./fixtures";
import { PREVIEW_LOCATION } from "../server/protocol/preview";

test.use({
  launchOptions: async ({ launchOptions }, use) =>
    use({ ...launchOptions, ignoreDefaultArgs: ["--disable-popup-blocking"] }),
});

interface Sink {
  origin: string;
  hits: string[];
}
let sink: Sink;
let close: () => void;
test.beforeAll(async () => {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><h1>Quiver (not)</h1>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  sink = { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
  close = () => server.close();
});
test.afterAll(() => close());
// The servers leave with their test, or the next spec's pane would list them: Ctrl+C in their
// terminal, and a time limit for a page that no longer shows its IDE.
const stops: (() => Promise<void>)[] = [];
test.afterEach(async () => {
  for (const stop of stops.splice(0)) await stop().catch(() => undefined);
});

/** Serves `files` (name → HTML) from a folder of the workspace on `port`, in a fresh session's
 *  terminal, and shows it in the preview pane; returns the session and the preview's origin. */
async function hostilePreview(page: Page, port: number, files: Record<string, string>, baseURL: string) {
  const dir = `hostile-${port}`;
  for (const [name, body] of Object.entries(files)) writeWorkspaceFile(`${dir}/${name}`, body);
  const sessionId = await openNewSession(page);
  // The pane's visibility is remembered per person: a second tab may have it open already.
  if (!(await page.getByTestId("pane-preview").isVisible())) await page.keyboard.press("Control+Alt+KeyP");
  await expect(page.getByTestId("pane-preview")).toBeVisible();
  const term = page.getByTestId("pane-terminal");
  await expect(term).toHaveAttribute("data-state", "open");
  await term.click();
  await page.keyboard.type(`cd ${dir} && timeout 120 python3 -m http.server ${port}\n`);
  stops.push(async () => {
    await term.click({ timeout: 2_000 });
    await page.keyboard.press("Control+C");
    await expect(page.locator(`[data-testid="preview-port-item"][data-port="${port}"]`)).toBeHidden();
    // Closed for good too: a terminal is kept 3 minutes without a page, and this file's sessions
    // together with the next specs' would fill the runner's 32 ("too many terminals are open").
    const closes = page.getByTestId("terminal-close");
    for (let i = 0; i < 8 && (await closes.count()) > 0; i++) await closes.first().click();
  });
  await page.locator(`[data-testid="preview-port-item"][data-port="${port}"]`).click();
  const frame = page.frameLocator('[data-testid="preview-frame"]');
  await expect(frame.getByRole("heading").first()).toBeVisible();
  return { sessionId, frame, origin: `http://${port}-${sessionId}.localhost:${new URL(baseURL).port}` };
}

/** The IDE is still where it was: its own page, its file tree on screen. */
async function stillTheIde(page: Page, ide: string) {
  await page.waitForTimeout(800);
  expect(page.url()).toBe(ide);
  await expect(page.getByTestId("file-tree")).toBeVisible();
}

const page = (title: string, body: string) => `<!doctype html><title>${title}</title><h1>${title}</h1>${body}`;

test("a click in the preview does not navigate the IDE's window: link, form, script or window.open to _top", async ({
  page: ide,
  baseURL,
}) => {
  const s = sink.origin;
  const { frame } = await hostilePreview(
    ide,
    8141,
    {
      "index.html": page(
        "hostile links",
        `<a id="link" href="${s}/link-top" target="_top">link</a>
<form id="form" action="${s}/form-top" target="_top"><button id="submit">form</button></form>
<button id="script" onclick="top.location.href='${s}/script-top'">script</button>
<button id="open" onclick="window.open('${s}/open-top','_top')">open</button>
<a id="parent" href="${s}/link-parent" target="_parent">parent</a>`,
      ),
    },
    baseURL!,
  );
  const url = ide.url();
  for (const id of ["link", "submit", "script", "open", "parent"]) {
    await frame.locator(`#${id}`).click();
    await stillTheIde(ide, url);
  }
  expect(sink.hits).toEqual([]);
});

test("without a click the preview neither navigates the IDE nor opens popups", async ({ page: ide, baseURL }) => {
  const s = sink.origin;
  const popups: string[] = [];
  ide.context().on("page", (p) => popups.push(p.url()));
  await hostilePreview(
    ide,
    8142,
    {
      "index.html": page(
        "hostile load",
        `<script>
try { top.location.href = "${s}/load-top"; } catch {}
try { window.open("${s}/load-popup"); } catch {}
setTimeout(() => { try { top.location.replace("${s}/later-top"); } catch {} }, 300);
</script>`,
      ),
    },
    baseURL!,
  );
  await stillTheIde(ide, ide.url());
  expect(popups).toEqual([]);
  expect(sink.hits).toEqual([]);
});

test("a popup the preview opens on a click cannot navigate the IDE through its opener", async ({
  page: ide,
  baseURL,
}) => {
  const s = sink.origin;
  const { frame, origin } = await hostilePreview(
    ide,
    8143,
    {
      "index.html": page("opener", `<button id="pop" onclick="window.open('/popup.html')">pop</button>`),
      "popup.html": page(
        "popup",
        `<script>
try { opener.top.location.href = "${s}/opener-top"; } catch {}
try { opener.parent.location.href = "${s}/opener-parent"; } catch {}
try { opener.parent.postMessage({ type: ${JSON.stringify(PREVIEW_LOCATION)}, path: "/from-popup" }, "*"); } catch {}
</script>`,
      ),
    },
    baseURL!,
  );
  const url = ide.url();
  // A developer's app may open a window of its own: that still works, on the app's host.
  const [popup] = await Promise.all([ide.context().waitForEvent("page"), frame.locator("#pop").click()]);
  await expect(popup.getByRole("heading")).toHaveText("popup");
  expect(popup.url()).toBe(`${origin}/popup.html`);
  await stillTheIde(ide, url);
  await expect(ide.getByTestId("preview-path")).toHaveValue("/");
  expect(sink.hits).toEqual([]);
  await popup.close();
});

test("the preview reads nothing of the IDE's origin: its window, cookies, storage or API", async ({
  page: ide,
  baseURL,
}) => {
  await ide.goto("/");
  await ide.evaluate(() => localStorage.setItem("quiver.h3.secret", "IDE-ONLY"));
  const ideOrigin = new URL(baseURL!).origin;
  const { frame } = await hostilePreview(ide, 8144, { "index.html": page("reader", "") }, baseURL!);
  const seen = await frame.locator("body").evaluate(async (_, ideOrigin) => {
    const attempt = async (f: () => unknown) => {
      try {
        return String(await f());
      } catch (e) {
        return `blocked ${(e as Error).name}`;
      }
    };
    return {
      parentDocument: await attempt(() => parent.document.title),
      parentStorage: await attempt(() => parent.localStorage.getItem("quiver.h3.secret")),
      topLocation: await attempt(() => top!.location.href),
      ownStorage: await attempt(() => localStorage.getItem("quiver.h3.secret")),
      cookie: await attempt(() => document.cookie),
      api: await attempt(() => fetch(`${ideOrigin}/api/health`, { credentials: "include" }).then((r) => r.text())),
      trpc: await attempt(() =>
        fetch(`${ideOrigin}/api/trpc/sessions.list`, { credentials: "include" }).then((r) => r.text()),
      ),
    };
  }, ideOrigin);
  expect(seen).toEqual({
    parentDocument: "blocked SecurityError",
    parentStorage: "blocked SecurityError",
    topLocation: "blocked SecurityError",
    // Its own storage is the preview host's (Chromium may refuse it a framed, credentialless page).
    ownStorage: expect.not.stringContaining("IDE-ONLY"),
    // The preview host's own cookie is HttpOnly.
    cookie: "",
    api: "blocked TypeError",
    trpc: "blocked TypeError",
  });
});

test("forged location messages move the address bar only within the app's own host", async ({ page: ide, baseURL }) => {
  const s = new URL(sink.origin).host;
  const post = (path: string) =>
    `parent.postMessage({ type: ${JSON.stringify(PREVIEW_LOCATION)}, path: ${JSON.stringify(path)} }, "*")`;
  const { frame, origin } = await hostilePreview(
    ide,
    8145,
    {
      "index.html": page(
        "messages",
        `<iframe src="/nested.html"></iframe>
<button id="js" onclick='${post("javascript:alert(1)")}'>js</button>
<button id="other" onclick='${post(`https://${s}/x`)}'>other</button>
<button id="slashes" onclick='${post(`//${s}/slashes`)}'>slashes</button>
<button id="backslash" onclick='${post(`/\\${s}/backslash`)}'>backslash</button>`,
      ),
      "nested.html": `<!doctype html><script>top.postMessage({ type: ${JSON.stringify(PREVIEW_LOCATION)}, path: "/from-nested" }, "*")</script>`,
    },
    baseURL!,
  );
  const dialogs: string[] = [];
  ide.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
  const path = ide.getByTestId("preview-path");
  await expect(path).toHaveValue("/");
  // Neither a script URL, another host, nor a frame inside the app is taken.
  for (const id of ["js", "other"]) {
    await frame.locator(`#${id}`).click();
    await ide.waitForTimeout(300);
    await expect(path).toHaveValue("/");
  }
  // Paths that look like another host stay paths of the app's own host: reloaded, and opened in a tab.
  for (const [id, shown] of [
    ["slashes", `//${s}/slashes`],
    ["backslash", `/\\${s}/backslash`],
  ]) {
    await frame.locator(`#${id}`).click();
    await expect(path).toHaveValue(shown);
    await ide.getByTestId("preview-reload").click();
    await expect
      .poll(() =>
        ide
          .frames()
          .find((f) => f.parentFrame() === ide.mainFrame())
          ?.url(),
      )
      .toMatch(new RegExp(`^${origin}/`));
    const [tab] = await Promise.all([ide.context().waitForEvent("page"), ide.getByTestId("preview-open").click()]);
    await tab.waitForLoadState();
    expect(new URL(tab.url()).origin).toBe(origin);
    await tab.close();
    await frame.locator("body").evaluate(() => location.assign("/"));
    await expect(path).toHaveValue("/");
  }
  expect(dialogs).toEqual([]);
  expect(sink.hits).toEqual([]);
});

test("an app cannot read another session's preview through its host (a script of its)", async ({
  page: ide,
  context,
  baseURL,
}) => {
  // Session A's app, with something worth reading in a script and a page.
  const victim = await hostilePreview(
    ide,
    8146,
    {
      "index.html": page("victim", ""),
      "secret.js": `window.VICTIM_SECRET = "A-ONLY";`,
    },
    baseURL!,
  );
  // Session B's app, in another tab, tries to read it.
  const attacker = await context.newPage();
  const { frame } = await hostilePreview(attacker, 8147, { "index.html": page("attacker", "") }, baseURL!);
  const got = await frame.locator("body").evaluate(async (_, victimOrigin) => {
    const script = await new Promise<string>((resolve) => {
      const el = document.createElement("script");
      el.src = `${victimOrigin}/secret.js`;
      el.onload = () => resolve(String((window as unknown as { VICTIM_SECRET?: string }).VICTIM_SECRET));
      el.onerror = () => resolve("refused");
      document.body.append(el);
    });
    return script;
  }, victim.origin);
  expect(got).toBe("refused");
  // The victim's own page still loads its own script.
  await expect(victim.frame.getByRole("heading")).toHaveText("victim");
});
