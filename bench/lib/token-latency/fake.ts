// Child process of the token-latency benchmark: the model provider, as far away from the
// server as a real one is (another process). Every session's reply is its own numbered tokens,
// one SSE event each, one every DELAY_MS; each token is stamped with the monotonic clock as its
// write goes out, and the orchestrator collects the stamps after each case.
import { startFakeProvider } from "../../../server/engine/fake-provider/server";
import { DELAY_MS, serve, TOKEN, TOKENS } from "./ipc";

/** Digits of a token's number: every token of a reply is as long as the others. */
const WIDTH = Math.max(4, String(TOKENS - 1).length);

function reply(tag: string) {
  const text = Array.from({ length: TOKENS }, (_, i) => `${tag}t${String(i).padStart(WIDTH, "0")} `).join("");
  // One token an event: "<tag>t0042 ".
  return { blocks: [{ type: "text" as const, text }], deltaChars: tag.length + WIDTH + 2, delayMs: DELAY_MS };
}

if (process.send) {
  let stamps: [string, number][] = [];
  let cpu = process.cpuUsage();
  const fake = await startFakeProvider({
    respond: (req) => reply(/bench (s\d{2}r\d+)(?![\s\S]*bench s)/.exec(req.raw)?.[1] ?? "s99r0"),
    onWrite: (_i, chunk) => {
      const now = Number(process.hrtime.bigint());
      for (const m of chunk.toString("utf8").matchAll(TOKEN)) stamps.push([m[0], now]);
    },
  });
  serve(
    async (req) => {
      if (req.type === "collect") {
        const out = stamps;
        const used = process.cpuUsage(cpu);
        stamps = [];
        cpu = process.cpuUsage();
        return { type: "times", times: out, cpuMs: (used.user + used.system) / 1000 };
      }
      if (req.type === "close") {
        await fake.close();
        return { type: "closed" };
      }
      throw new Error(`fake provider: no ${req.type}`);
    },
    async () => ({ type: "ready", anthropicBaseURL: fake.anthropicBaseURL, openaiBaseURL: fake.openaiBaseURL }),
  );
}
