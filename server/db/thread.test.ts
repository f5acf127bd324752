// A request/reply thread's close: the requests out are answered first, and a thread that will
// not end (held in native code here; in the field, Node's wait for V8's background work) does
// not hold the caller's stop for longer than the close's timing.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { threadClient } from "./thread";

const dir = mkdtempSync(join(tmpdir(), "quiver-thread-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Echoes each request after `ms`; on close, sleeps `closeSleep` seconds in a blocking call, then
// ends once every answer is out.
const entry = join(dir, "echo.mjs");
writeFileSync(
  entry,
  `import { execFileSync } from "node:child_process";
import { parentPort, workerData } from "node:worker_threads";
const out = new Set();
parentPort.on("message", (m) => {
  if (m.type === "close") {
    if (workerData.closeSleep) execFileSync("sleep", [String(workerData.closeSleep)]);
    void Promise.all(out).then(() => parentPort.close());
    return;
  }
  const p = new Promise((r) => setTimeout(r, m.ms)).then(() => parentPort.postMessage({ id: m.id, ok: true, echo: m.echo }));
  out.add(p);
});
`,
);

type Reply = { id: number; ok: true; echo: string } | { id: number; ok: false };
const client = (closeSleep: number, timing = { finishMs: 200, endMs: 300 }) =>
  threadClient<Reply>(pathToFileURL(entry), { closeSleep }, "the test thread", () => new Error("refused"), timing);

describe("thread close", () => {
  it("answers the requests already out before the thread ends", async () => {
    const thread = client(0, { finishMs: 5_000, endMs: 5_000 });
    const answer = thread.request((id) => ({ id, type: "echo", echo: "late", ms: 300 }));
    await thread.close();
    expect((await answer).echo).toBe("late");
  });

  it("goes on without a thread that does not end once stopped", async () => {
    const thread = client(4);
    expect((await thread.request((id) => ({ id, type: "echo", echo: "up", ms: 0 }))).echo).toBe("up");
    const started = Date.now();
    await thread.close();
    // finishMs + endMs = 500 ms; the thread's own sleep is 4 s.
    expect(Date.now() - started).toBeLessThan(3_000);
  }, 15_000);
});
