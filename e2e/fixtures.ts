// Shared fixtures for the IDE's browser tests: a fake model provider in the test process (the
// server is pointed at it by ANTHROPIC_BASE_URL in playwright.config.ts) whose answers each test
// scripts, a guard that fails any test whose page sent a request off this machine, and helpers
// to open a fresh session with files in its workspace, script the model and drive the chat.
import { test as base, expect, type Page } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider, type FakeProvider, type RecordedRequest } from "../server/engine/fake-provider/server";
import type { ScriptStepInput } from "../server/engine/fake-provider/script";

export const MODEL_PORT = Number(process.env.E2E_MODEL_PORT ?? 3218);
// *.localhost resolves to loopback in Chromium: the live preview's hosts (8123-<session>.localhost).
const LOCAL = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface Model {
  provider: FakeProvider;
  /** Answers for the next model requests, in order. */
  script(...steps: ScriptStepInput[]): void;
  /** Answers each request from what it asks, before the script (requests that arrive in no set
   *  order, such as parallel subagents'); undefined falls through to the script. */
  route(answer: (request: RecordedRequest) => ScriptStepInput | undefined): void;
}

interface ModelServer {
  provider: FakeProvider;
  queue: ScriptStepInput[];
  routes: ((request: RecordedRequest) => ScriptStepInput | undefined)[];
}

export const test = base.extend<{ offHost: string[]; model: Model; failureNotes: void }, { modelServer: ModelServer }>({
  modelServer: [
    async ({}, use) => {
      const queue: ScriptStepInput[] = [];
      const routes: ModelServer["routes"] = [];
      // Unscripted requests get a plain answer rather than a hang.
      const provider = await startFakeProvider({
        port: MODEL_PORT,
        respond: (req) =>
          routes[0]?.(req) ?? queue.shift() ?? { blocks: [{ type: "text", text: "(unscripted reply)" }] },
      });
      await use({ provider, queue, routes });
      await provider.close();
    },
    { scope: "worker" },
  ],
  model: async ({ modelServer }, use) => {
    // Steps left over from an earlier test must not answer this one.
    modelServer.queue.length = 0;
    modelServer.routes.length = 0;
    await use({
      provider: modelServer.provider,
      script: (...steps) => modelServer.queue.push(...steps),
      route: (answer) => void (modelServer.routes[0] = answer),
    });
  },
  offHost: [
    async ({ context }, use) => {
      const seen: string[] = [];
      context.on("request", (r) => {
        const u = new URL(r.url());
        if (
          (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "ws:" || u.protocol === "wss:") &&
          !LOCAL.has(u.hostname) &&
          !u.hostname.endsWith(".localhost")
        )
          seen.push(r.url());
      });
      await use(seen);
      expect(seen, "requests that left localhost").toEqual([]);
    },
    { auto: true },
  ],
  // A failed test prints what its pages' terminals and banners said: CI keeps only this output,
  // and a terminal's own words (how it ended) are the quickest way to its cause.
  failureNotes: [
    async ({ context }, use, testInfo) => {
      await use();
      if (testInfo.status === testInfo.expectedStatus) return;
      for (const open of context.pages()) {
        const said = await open
          .evaluate(() =>
            [...document.querySelectorAll('.xterm-rows, [role="alert"], [role="status"]')]
              .map((e) => (e as HTMLElement).innerText.trim())
              .filter(Boolean),
          )
          .catch((e: Error) => [`(could not read the page: ${e.message})`]);
        console.log(
          `[after the failure] ${open.url()}\n${said.map((t) => `  | ${t.replace(/\n/g, "\n  | ")}`).join("\n")}`,
        );
      }
    },
    { auto: true },
  ],
});

export { expect };

/** The workspace folder the e2e server's local runner serves. */
export function workspaceDir(): string {
  return join(process.env.E2E_DATA_DIR!, "workspace");
}

export function writeWorkspaceFile(rel: string, content: string | Uint8Array): void {
  const full = join(workspaceDir(), rel);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
}

/** Creates a session from the home page and waits for the IDE with its runner and file tree. */
export async function openNewSession(page: Page): Promise<string> {
  await page.goto("/");
  await page.getByTestId("new-session").click();
  await expect(page).toHaveURL(/\/s\/[a-z0-9]+$/);
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "connected");
  await expect(page.getByTestId("file-tree")).toBeVisible();
  return page.url().split("/").pop()!;
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `test-results/e2e/screens/${name}.png` });
}

/** A model response that calls one tool. */
export const call = (name: string, args: object) => ({
  blocks: [{ type: "tool_call" as const, name, arguments: JSON.stringify(args) }],
});
/** A model response that answers with text (`extra`: delays, chunking, usage…). */
export const say = (text: string, extra: object = {}) => ({ blocks: [{ type: "text" as const, text }], ...extra });

/** Sends a chat message and waits until it is shown. */
export async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId("composer").fill(text);
  await page.getByTestId("composer").press("Enter");
  await expect(page.getByTestId("msg-user").last()).toHaveText(text);
}

/** The latest tool card of `tool`. */
export const card = (page: Page, tool: string) => page.locator(`[data-testid="tool-card"][data-tool="${tool}"]`).last();
