// The fake provider's own limits: its request log stays at its bound however many requests
// come, and the command line says a taken port in one line with an exit code, not a stack.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "./server";

const started: FakeProvider[] = [];
afterAll(async () => void (await Promise.all(started.map((f) => f.close()))));

async function ask(fake: FakeProvider, n: number): Promise<string[]> {
  const streams: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${fake.anthropicBaseURL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        stream: true,
        messages: [{ role: "user", content: `request ${i} ${"x".repeat(4000)}` }],
      }),
    });
    streams.push(await res.text());
  }
  return streams;
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "server/engine/fake-provider/main.ts", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("fake provider", () => {
  it("fills a step's {{pass}} with the times through a looping script, so each pass names new files and ports", async () => {
    const fake = await startFakeProvider({
      steps: [
        {
          blocks: [
            { type: "text", text: "Pass {{pass}}: serving on {{pass+7999}}." },
            {
              type: "tool_call",
              name: "write_file",
              arguments: '{"path": "site-{{pass}}/a.txt", "port": {{pass+7999}}}',
            },
          ],
          deltaChars: 500,
        },
        {
          blocks: [{ type: "text", text: "Done with {{pass}}; {{ pass }} and {{passes}} stay as they are." }],
          deltaChars: 500,
        },
      ],
      loop: true,
    });
    started.push(fake);
    const streams = await ask(fake, 5);
    expect(streams[0]).toContain("Pass 1: serving on 8000.");
    expect(streams[0]).toContain('site-1/a.txt\\", \\"port\\": 8000}');
    expect(streams[1]).toContain("Done with 1; {{ pass }} and {{passes}} stay as they are.");
    expect(streams[2]).toContain("Pass 2: serving on 8001.");
    expect(streams[2]).toContain('site-2/a.txt\\", \\"port\\": 8001}');
    expect(streams[3]).toContain("Done with 2;");
    expect(streams[4]).toContain("Pass 3: serving on 8002.");
    expect(streams.join("")).not.toMatch(/\{\{pass(\+\d+)?\}\}/);
  });

  it("keeps only the latest requests: the log stays at its bound", async () => {
    const fake = await startFakeProvider({
      steps: [{ blocks: [{ type: "text", text: "ok" }] }],
      loop: true,
      keepRequests: 5,
    });
    started.push(fake);
    await ask(fake, 12);
    expect(fake.received()).toBe(12);
    expect(fake.requests).toHaveLength(5);
    // The kept ones are the latest, oldest first.
    expect(fake.requests.map((r) => JSON.stringify(r.body).match(/request (\d+)/)![1])).toEqual([
      "7",
      "8",
      "9",
      "10",
      "11",
    ]);
  });

  it("a stream held at pauseAfterBytes goes on, whole, only after resume()", async () => {
    const fake = await startFakeProvider({
      steps: [{ blocks: [{ type: "text", text: "held answer" }], pauseAfterBytes: 200 }],
    });
    started.push(fake);
    const res = await fetch(`${fake.anthropicBaseURL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages: [] }),
    });
    const reader = res.body!.getReader();
    let got = 0;
    const chunks: Uint8Array[] = [];
    while (got < 200) {
      const { value } = await reader.read();
      chunks.push(value!);
      got += value!.length;
    }
    expect(got).toBe(200);
    const more = reader.read();
    const early = await Promise.race([more.then(() => "data"), new Promise((r) => setTimeout(() => r("held"), 300))]);
    expect(early).toBe("held");
    fake.resume();
    for (let r = await more; !r.done; r = await reader.read()) chunks.push(r.value);
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text).toContain("message_stop");
    expect(text.match(/"text":"([^"]*)"/g)!.join("")).toContain("held");
  });

  it("a resume() that comes before the stream reaches its pause is not lost", async () => {
    const fake = await startFakeProvider({
      steps: [{ blocks: [{ type: "text", text: "never held" }], pauseAfterBytes: 200 }],
    });
    started.push(fake);
    fake.resume();
    const res = await fetch(`${fake.anthropicBaseURL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages: [] }),
    });
    const text = await Promise.race([res.text(), new Promise<string>((r) => setTimeout(() => r("held"), 5_000))]);
    expect(text).toContain("message_stop");
  });

  it("keeps 200 by default", async () => {
    const fake = await startFakeProvider({ steps: [{ blocks: [{ type: "text", text: "ok" }] }], loop: true });
    started.push(fake);
    await ask(fake, 230);
    expect(fake.received()).toBe(230);
    expect(fake.requests).toHaveLength(200);
  }, 60_000);

  it("a taken port: one line and exit code 1, no stack trace", async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as AddressInfo).port;
    try {
      const { code, stderr } = await run(["--port", String(port)]);
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(`Port ${port} on 127.0.0.1 is already in use; pick another with --port.`);
    } finally {
      taken.close();
    }
  }, 30_000);

  it("--help names the request bound", async () => {
    const { code, stdout } = await run(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--keep-requests N");
    expect(stdout).toContain("default 200");
  }, 30_000);
});
