// The start's hold on the event loop: pending while held, gone once released.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { holdEventLoop } from "./loop-hold";

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("holdEventLoop", () => {
  it("counts as pending while held and no longer once released (twice is harmless)", () => {
    const before = timers();
    const release = holdEventLoop();
    expect(timers()).toBe(before + 1);
    release();
    release();
    expect(timers()).toBe(before);
  });

  it("keeps a process alive until released, then lets it exit", async () => {
    const script = `
      const { holdEventLoop } = await import(${JSON.stringify(join(import.meta.dirname, "loop-hold.ts"))});
      const release = holdEventLoop();
      setTimeout(() => { console.log("still here"); release(); }, 300).unref();
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const code = await new Promise((r) => child.once("exit", r));
    // The only other timer is unref'd: without the hold the process would have exited at once.
    expect(out.trim()).toBe("still here");
    expect(code).toBe(0);
  }, 30_000);
});
