// The threads start.mjs starts before the server's bundle loads (early.mjs): handed over once to
// the server asking for the same thread, never to one asking for another, ended when unused, and
// a thread that fails before it is adopted is no uncaught error and is not handed over.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Worker } from "node:worker_threads";
import { adoptEarlyThread, adoptedThreads, endUnadoptedThreads, startEarlyThread } from "./early.mjs";

const dir = mkdtempSync(join(tmpdir(), "quiver-early-"));
// Answers each message with its own workerData and the message, as a server thread answers requests.
const echo = join(dir, "echo.mjs");
writeFileSync(
  echo,
  `import { parentPort, workerData } from "node:worker_threads";
parentPort.on("message", (m) => parentPort.postMessage({ m, url: workerData.url }));`,
);
const broken = join(dir, "broken.mjs");
writeFileSync(broken, `throw new Error("no database here");`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = (w: Worker, m: string) =>
  new Promise<unknown>((resolve) => {
    w.once("message", resolve);
    w.postMessage(m);
  });
const exited = (w: Worker) => new Promise<number>((resolve) => w.once("exit", resolve));

describe("threads started early", () => {
  it("hands the thread to the first asker with the same data, whatever the order of its keys and tsx's loader", async () => {
    const before = adoptedThreads();
    const started = startEarlyThread({ url: "file:/a.db", entry: pathToFileURL(echo).href });
    const adopted = adoptEarlyThread({ entry: pathToFileURL(echo).href, url: "file:/a.db", tsx: "file:///tsx.mjs" });
    expect(adopted).toBe(started);
    expect(adoptedThreads()).toBe(before + 1);
    expect(await ask(adopted!, "hello")).toEqual({ m: "hello", url: "file:/a.db" });
    // once only
    expect(adoptEarlyThread({ url: "file:/a.db", entry: pathToFileURL(echo).href })).toBeUndefined();
    await adopted!.terminate();
  });

  it("gives nothing to a server asking for another database, and ends the unused thread", async () => {
    const started = startEarlyThread({ url: "file:/guessed.db", entry: pathToFileURL(echo).href });
    expect(adoptEarlyThread({ url: "file:/other.db", entry: pathToFileURL(echo).href })).toBeUndefined();
    const gone = exited(started);
    expect(endUnadoptedThreads()).toEqual([pathToFileURL(echo).href]);
    expect(typeof (await gone)).toBe("number"); // it exits: terminated
    expect(endUnadoptedThreads()).toEqual([]);
  });

  it("drops a thread that failed before anyone asked: no uncaught error, nothing handed over", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on("uncaughtException", onUncaught);
    try {
      const started = startEarlyThread({ url: "file:/x.db", entry: pathToFileURL(broken).href });
      await exited(started);
      expect(adoptEarlyThread({ url: "file:/x.db", entry: pathToFileURL(broken).href })).toBeUndefined();
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });
});
