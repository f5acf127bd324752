// Runs the fake provider by hand:
//   tsx server/engine/fake-provider/main.ts --port 4010 --script my-script.json
// then start Quiver with ANTHROPIC_BASE_URL=http://127.0.0.1:4010 ANTHROPIC_API_KEY=fake (or
// OPENAI_BASE_URL=http://127.0.0.1:4010/v1). Without --script it answers every request with a
// short text reply. The script file is `{ "steps": [...], "loop": true }` (see script.ts).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Script } from "./script";
import { DEFAULT_KEEP_REQUESTS, startFakeProvider } from "./server";

const HELP = `Usage: tsx server/engine/fake-provider/main.ts [--port N] [--script FILE] [--keep-requests N]

A local model provider speaking Anthropic's /v1/messages and OpenAI's /v1/chat/completions,
and listing its models at GET /v1/models in either format (Anthropic's when the request has an
anthropic-version header, else OpenAI's). It lists fake-model (takes images) and fake-model-text
unless the script's "models" says otherwise.
  --port N            port on 127.0.0.1 (default 4010; 0 picks a free one)
  --script FILE       JSON { "steps": [...], "loop": true, "models": [...] } answered in order
                      (script.ts); without it every request gets a short text reply.
                      "models": [{ "id": "m", "name": "M", "images": true }] is the list, or
                      { "status": 503 } makes the list fail. With "loop", {{pass}} in a
                      step's text or arguments is the time through the script (1, 2, …),
                      {{pass+N}} that plus N: each pass can name new files and ports
  --keep-requests N   requests it keeps in memory, the latest ones (default ${DEFAULT_KEEP_REQUESTS}):
                      its memory stays bounded however long it runs
Exit codes: 2 bad arguments or script, 1 the port cannot be listened on (for example in use).`;

const fail = (code: number, line: string): never => {
  console.error(line);
  process.exit(code);
};

let values: { port: string; script?: string; "keep-requests"?: string; help?: boolean };
try {
  values = parseArgs({
    options: {
      port: { type: "string", default: "4010" },
      script: { type: "string" },
      "keep-requests": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }).values as typeof values;
} catch (err) {
  fail(2, `${(err as Error).message} (see --help)`);
}
if (values!.help) {
  console.log(HELP);
  process.exit(0);
}
const port = Number(values!.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(2, `--port must be a port number, got ${values!.port}`);
const keepRequests = values!["keep-requests"] === undefined ? DEFAULT_KEEP_REQUESTS : Number(values!["keep-requests"]);
if (!Number.isInteger(keepRequests) || keepRequests < 0)
  fail(2, `--keep-requests must be a whole number ≥ 0, got ${values!["keep-requests"]}`);

let script: Script;
if (values!.script) {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(values!.script, "utf8"));
  } catch (err) {
    fail(2, `Cannot read script ${values!.script}: ${(err as Error).message}`);
  }
  const parsed = Script.safeParse(json);
  if (!parsed.success)
    fail(
      2,
      `Bad script ${values!.script}: ${parsed.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  script = parsed.data!;
} else {
  script = Script.parse({ steps: [{ blocks: [{ type: "text", text: "Hello from the fake provider." }] }], loop: true });
}

const fake = await startFakeProvider({
  steps: script.steps,
  loop: script.loop,
  port,
  keepRequests,
  models: script.models,
}).catch((err: NodeJS.ErrnoException) =>
  fail(
    1,
    err.code === "EADDRINUSE"
      ? `Port ${port} on 127.0.0.1 is already in use; pick another with --port.`
      : `Cannot listen on 127.0.0.1:${port}: ${err.message}`,
  ),
);
console.log(
  `fake provider on ${fake.anthropicBaseURL} (Anthropic) and ${fake.openaiBaseURL} (OpenAI); ${script.steps.length} step(s)${script.loop ? ", looping" : ""}; keeps the last ${keepRequests} request(s)`,
);
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
