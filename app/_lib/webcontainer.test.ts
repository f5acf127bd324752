// The boot attempt's timeout: a boot that hangs (offline) gives a reason, not a spinner.
import { describe, expect, it } from "vitest";
import { bootWithTimeout } from "./webcontainer";

describe("bootWithTimeout", () => {
  it("gives up on a boot that never settles, saying why", async () => {
    const started = Date.now();
    const r = await bootWithTimeout(() => new Promise(() => {}), 150);
    expect(r).toEqual({ ok: false, reason: expect.stringContaining("no answer from WebContainer in 0 s") });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("reports a boot that fails, and one that succeeds", async () => {
    expect(await bootWithTimeout(() => Promise.reject(new Error("Unable to create more instances")), 1000)).toEqual({
      ok: false,
      reason: "WebContainer failed to boot: Unable to create more instances",
    });
    expect(await bootWithTimeout(() => Promise.resolve("wc"), 1000)).toEqual({ ok: true, instance: "wc" });
  });
});
