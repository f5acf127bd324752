// Runs the fake provider by hand:
//   tsx server/engine/fake-provider/main.ts --port 4010 --script my-script.json
// then start Quiver with ANTHROPIC_BASE_URL=http://127.0.0.1:4010 ANTHROPIC_API_KEY=fake (or
// OPENAI_BASE_URL=http://127.0.0.1:4010/v1). Without --script it answers every request with a
// short text reply. The script file is `{ "steps": [...], "loop": true }` (see script.ts).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Script } from "./script";
import { startFakeProvider } from "./server";

const { values } = parseArgs({ options: { port: { type: "string", default: "4010" }, script: { type: "string" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got ${values.port}`);
  process.exit(2);
}

let script: Script;
if (values.script) {
  const parsed = Script.safeParse(JSON.parse(readFileSync(values.script, "utf8")));
  if (!parsed.success) {
    console.error(`Bad script ${values.script}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    process.exit(2);
  }
  script = parsed.data;
} else {
  script = Script.parse({ steps: [{ blocks: [{ type: "text", text: "Hello from the fake provider." }] }], loop: true });
}

const fake = await startFakeProvider({ steps: script.steps, loop: script.loop, port });
console.log(`fake provider on ${fake.anthropicBaseURL} (Anthropic) and ${fake.openaiBaseURL} (OpenAI); ${script.steps.length} step(s)${script.loop ? ", looping" : ""}`);
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
