// Connection trouble, against the real server and runner: the page's event socket dropping in the
// middle of a streamed answer (cut in the page by Playwright's WebSocket routing, the server keeps
// streaming), and the local runner process being killed in the middle of a command (the server
// restarts it). Each time the banner says what is down, goes away by itself once it is back, and
// the chat resumes with nothing lost and nothing doubled.
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Page, WebSocketRoute } from "@playwright/test";
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

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `w${String(i + 1).padStart(3, "0")}`).join(" ");

/**
 * Puts the page's tRPC WebSocket behind a switch: `drop()` closes the live connection (both
 * ends) and holds new connection attempts unanswered, like an unreachable server, until
 * `restore()` lets them through. Must be set up before the page loads.
 */
async function eventSocketSwitch(page: Page) {
  let reachable: Promise<void> = Promise.resolve();
  let restore = () => {};
  const live = new Set<WebSocketRoute>();
  await page.routeWebSocket(
    (url) => url.pathname === "/api/trpc",
    async (ws) => {
      await reachable;
      ws.connectToServer();
      live.add(ws);
    },
  );
  return {
    async drop() {
      reachable = new Promise((resolve) => (restore = resolve));
      await Promise.all([...live].map((ws) => ws.close({ code: 4000, reason: "test: connection dropped" })));
      live.clear();
    },
    restore: () => restore(),
  };
}

/** The chat as a person reads it, to compare a resumed page with a freshly loaded one. */
const chatText = (page: Page) => page.getByTestId("chat-log").innerText();

test("the event socket drops mid-answer: banner, reconnect by itself, the answer complete and once", async ({
  page,
  model,
}) => {
  const socket = await eventSocketSwitch(page);
  const full = numbered(160);
  model.script(say(full, { deltaChars: 3, delayMs: 25 }));
  await openNewSession(page);
  await send(page, "Count for me.");
  const answer = page.getByTestId("msg-assistant");
  await expect(answer.last()).toContainText("w010");

  await socket.drop();
  const banner = page.getByTestId("connection-banner");
  await expect(banner).toContainText("Connection to the server lost");
  await expect(page.getByTestId("events-state")).toHaveAttribute("data-state", "retrying");
  await shot(page, "event-socket-lost");
  // While it is down nothing arrives, although the server goes on streaming.
  const frozen = await answer.last().innerText();
  await page.waitForTimeout(1500);
  expect(await answer.last().innerText()).toBe(frozen);
  expect(frozen.trim().length).toBeLessThan(full.length);

  socket.restore();
  await expect(banner).toBeHidden();
  await expect(page.getByTestId("events-state")).toHaveAttribute("data-state", "live");
  await expect(answer.last()).toHaveText(full);
  await expect(answer).toHaveCount(1);
  await expect(page.getByTestId("msg-user")).toHaveCount(1);
  await expect(page.getByTestId("turn-usage")).toHaveCount(1);
  await shot(page, "event-socket-resumed");
  const resumed = await chatText(page);
  await page.reload();
  await expect(answer.last()).toHaveText(full);
  // The turn's cost line arrives after the messages (its own query): poll until the page settles.
  await expect.poll(() => chatText(page)).toBe(resumed);
});

/** Whether the process leads its own process group. A child the runner is spawning shows the
 *  runner's command line between its fork and its exec, and is no group's leader: killing its
 *  "group" failed with ESRCH once pids had wrapped below the runner's. */
function leadsItsGroup(pid: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after the last ")".
    const pgrp = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2];
    return pgrp === pid;
  } catch {
    return false; // gone meanwhile
  }
}

/** The local runner the e2e server spawned for its workspace (its own process group). */
function runnerPid(): number {
  const workspace = resolve(workspaceDir());
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile
    }
    const at = argv.indexOf("--workspace");
    if (at > 0 && argv.some((a) => a.endsWith("runner/main.ts")) && resolve(argv[at + 1] ?? "") === workspace)
      if (leadsItsGroup(entry)) return Number(entry);
  }
  throw new Error(`no runner process serves ${workspace}`);
}

test("the runner is killed mid-command: banner, the call fails clearly, the restarted runner serves the next turn", async ({
  page,
  model,
}) => {
  writeWorkspaceFile("before-crash.txt", "still here\n");
  model.script(call("shell", { command: "sleep 30" }), say("The runner went away while the command ran."));
  await openNewSession(page);
  await send(page, "Run the long command.");
  await page.locator('[data-testid="approval-card"][data-state="pending"]').getByTestId("approve-once").click();
  await expect(card(page, "shell")).toHaveAttribute("data-status", "running");

  const pid = runnerPid();
  process.kill(-pid, "SIGKILL"); // the runner and its command, as if the machine lost them
  const banner = page.getByTestId("connection-banner");
  // Says the runner is gone, by id when the session's workspace is placed on a named runner.
  await expect(banner).toContainText(/runner.*(is disconnected|gone since)/);
  await expect(banner).toContainText("unavailable until it reconnects");
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "disconnected");
  await shot(page, "runner-lost");
  // The call in flight fails with a reason instead of hanging; the turn goes on to its answer.
  await expect(card(page, "shell")).toHaveAttribute("data-status", "failed");
  // The person reads a one-line note (the model's fuller text, with what to check, is behind a toggle).
  await expect(card(page, "shell").getByTestId("tool-note")).toContainText(/disconnected|not connected/);
  await expect(card(page, "shell").getByTestId("tool-model-text")).toContainText(/may have partly run|did not run/);
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("The runner went away while the command ran.");

  // The server restarts its runner; the banner goes by itself and the next turn runs there.
  await expect(banner).toBeHidden({ timeout: 45_000 });
  await expect(page.getByTestId("runner-state")).toHaveAttribute("data-state", "connected");
  expect(runnerPid()).not.toBe(pid);
  model.script(call("shell", { command: "cat before-crash.txt" }), say("It is still there."));
  await send(page, "Is the file still there?");
  await expect(card(page, "shell")).toHaveAttribute("data-status", "succeeded");
  await expect(card(page, "shell").getByTestId("tool-output")).toContainText("still here");
  await expect(page.getByTestId("msg-assistant").last()).toHaveText("It is still there.");
  await expect(page.getByTestId("msg-user")).toHaveCount(2);
  await expect(page.getByTestId("msg-assistant")).toHaveCount(2);
  await shot(page, "runner-back");
  const resumed = await chatText(page);
  await page.reload();
  await expect(page.getByTestId("msg-assistant")).toHaveCount(2);
  // The turn's cost line arrives after the messages (its own query): poll until the page settles.
  await expect.poll(() => chatText(page)).toBe(resumed);
});
