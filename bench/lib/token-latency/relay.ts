// Child process of the token-latency benchmark: the floor. The least a server in the middle can
// do: read the provider through the same SDK adapter the engine uses and write each text delta
// to the client's WebSocket as JSON, with no engine, hub, database or tRPC. What a case adds
// through this relay is what one more Node process in the path costs on this machine at that
// load; the engine's added latency is read against it.
// Wire (ours, bench only): the client sends {"kind","prompt"}; the relay answers with
// {"type":"text.delta","text"} per delta, then {"type":"turn.finished"}.
//   argv: <anthropic base url> <openai base url>
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { z } from "zod";
import { createAdapter } from "../../../server/engine/providers/index";
import { serve } from "./ipc";

const Ask = z.object({ kind: z.enum(["anthropic", "openai"]), prompt: z.string() });

if (process.send) {
  const [anthropicBaseURL, openaiBaseURL] = process.argv.slice(2);
  const adapters = {
    anthropic: createAdapter({ kind: "anthropic", model: "fake", apiKey: "k", baseURL: anthropicBaseURL }),
    openai: createAdapter({ kind: "openai", model: "fake", apiKey: "k", baseURL: openaiBaseURL }),
  };
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (ws) => {
    const abort = new AbortController();
    ws.on("close", () => abort.abort());
    ws.on("message", async (raw) => {
      const ask = Ask.parse(JSON.parse(String(raw)));
      const spec = {
        system: "S",
        tools: [],
        messages: [{ role: "user" as const, content: [{ type: "text" as const, text: ask.prompt }] }],
      };
      try {
        for await (const ev of adapters[ask.kind].stream(spec, abort.signal)) {
          if (ev.type === "text") ws.send(JSON.stringify({ type: "text.delta", text: ev.text }));
        }
        ws.send(JSON.stringify({ type: "turn.finished" }));
      } catch (err) {
        ws.close(1011, String(err).slice(0, 100));
      }
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  let cpu = process.cpuUsage();
  serve(
    async (req) => {
      if (req.type === "collect") {
        const used = process.cpuUsage(cpu);
        cpu = process.cpuUsage();
        return { type: "times", times: [], cpuMs: (used.user + used.system) / 1000 };
      }
      if (req.type === "close") {
        for (const ws of wss.clients) ws.terminate();
        await new Promise<void>((r) => wss.close(() => http.close(() => r())));
        return { type: "closed" };
      }
      throw new Error(`relay: no ${req.type}`);
    },
    async () => ({ type: "ready", url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}` }),
  );
}
