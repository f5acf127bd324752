// fetch_url: GETs a web page or file on the runner, through its SSRF guard, and returns it as
// readable text marked as network content (the pipeline wraps it as external_content).
import { readFileSync } from "node:fs";
import { FETCH_LIMITS, FetchUrlInput } from "../../protocol/exec-ops";
import { respond } from "../errors";
import { defineTool, type ToolResult } from "../tool";

export const fetchUrlTool = defineTool({
  name: "fetch_url",
  description: readFileSync(new URL("./fetch_url.txt", import.meta.url), "utf8").trim(),
  input: FetchUrlInput,
  capabilities: ["Network"],
  executor: "runner",
  fieldAliases: { uri: "url", link: "url", href: "url" },
  // A GET changes nothing here; the pipeline still never starts network tools speculatively.
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  isDestructive: () => false,
  isOpenWorld: () => true,
  summarize: (i) => `GET ${i.url}`,
  validateInput(i) {
    let url: URL;
    try {
      url = new URL(i.url);
    } catch {
      return `url must be an absolute http:// or https:// URL (got ${JSON.stringify(i.url.slice(0, 200))})`;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return `only http and https URLs can be fetched, not ${url.protocol}`;
    return undefined;
  },
  async execute(input, ctx): Promise<ToolResult> {
    const r = await ctx.remote(input, { timeoutMs: FETCH_LIMITS.timeoutMs + 10_000 });
    // No response at all (refused, unreachable, timed out): a plain error the model can act on.
    if (typeof r.meta?.status !== "number") throw respond(r.output, r.meta);
    // An HTTP error page is still a response, and still untrusted: it goes back as network
    // content (wrapped by the pipeline) with its status line first, not as a tool error.
    return { output: r.output, network: true, kind: "text", meta: r.meta };
  },
});
