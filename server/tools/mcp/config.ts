// The MCP configuration file (QUIVER_MCP_CONFIG) in the common shape
//   { "mcpServers": { "<name>": { "command", "args", "env", "cwd" } | { "url", "headers" } } }
// read once at start-up, with `${VAR}` / `${VAR:-default}` expanded from the server's environment
// (expand.ts). Nothing here throws: a file that cannot be read or parsed gives one problem and no
// servers; one bad entry (or one naming an unset variable) gives a problem and the others start.
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { expandEntry, type Vars } from "./expand";

export type McpTransportConfig =
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { kind: "http"; url: string; headers: Record<string, string> };

export interface McpServerConfig {
  /** The key in `mcpServers`: what policy rules (`mcpServer`) and tool names refer to. */
  name: string;
  transport: McpTransportConfig;
  /** Per-call deadline for this server's tools (default: the client's). */
  timeoutMs?: number;
  /** `"trusted": true`: the org vouches for this server, so its readOnlyHint lifts the approval. */
  trusted?: boolean;
}

export interface McpConfig {
  servers: McpServerConfig[];
  /** One line each: what is wrong and which server or file it concerns. */
  problems: string[];
}

const strings = z.record(z.string(), z.string());
const timeoutMs = z.number().int().min(1).max(3_600_000).optional();
const trusted = z.boolean().optional();
// Other clients' keys (disabled, alwaysAllow, …) are ignored, so a file shared with them works.
const stdio = z.looseObject({
  type: z.literal("stdio").optional(),
  command: z.string().trim().min(1, "command must not be empty"),
  args: z.array(z.string()).default([]),
  env: strings.default({}),
  cwd: z.string().min(1).optional(),
  timeoutMs,
  trusted,
});
const http = z.looseObject({
  type: z.enum(["http", "streamable-http", "streamableHttp"]).optional(),
  url: z.string().refine((v) => {
    try {
      return ["http:", "https:"].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, "url must be an http:// or https:// URL"),
  headers: strings.default({}),
  timeoutMs,
  trusted,
});
const file = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

// Server names become part of tool names and policy matches: keep them short and printable.
const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

function issueText(error: z.ZodError): string {
  const i = error.issues[0];
  const at = i.path.length > 0 ? `${i.path.join(".")}: ` : "";
  return `${at}${i.message}`;
}

/** Validates the parsed JSON of a config file; `baseDir` resolves relative `cwd`s, `vars` fill `${VAR}`s. */
export function parseMcpConfig(json: unknown, baseDir: string, vars: Vars = process.env): McpConfig {
  const top = file.safeParse(json);
  if (!top.success)
    return { servers: [], problems: [`expected { "mcpServers": { "<name>": {...} } } (${issueText(top.error)})`] };
  const servers: McpServerConfig[] = [];
  const problems: string[] = [];
  for (const [name, entry] of Object.entries(top.data.mcpServers)) {
    if (!NAME.test(name)) {
      problems.push(`server "${name}": the name must be 1-64 letters, digits, spaces, dots, dashes or underscores`);
      continue;
    }
    let e = (entry && typeof entry === "object" ? entry : {}) as Record<string, unknown>;
    if (e.type === "sse") {
      problems.push(`server "${name}": the old SSE transport is not supported; use Streamable HTTP (a "url") or stdio`);
      continue;
    }
    const isHttp = "url" in e;
    if (!isHttp && !("command" in e)) {
      problems.push(`server "${name}": needs either "command" (stdio) or "url" (Streamable HTTP)`);
      continue;
    }
    try {
      e = expandEntry(e, vars);
    } catch (err) {
      problems.push(`server "${name}": ${(err as Error).message}`);
      continue;
    }
    if (isHttp) {
      const r = http.safeParse(e);
      if (!r.success) problems.push(`server "${name}": ${issueText(r.error)}`);
      else
        servers.push({
          name,
          transport: { kind: "http", url: r.data.url, headers: r.data.headers },
          timeoutMs: r.data.timeoutMs,
          ...(r.data.trusted ? { trusted: true } : {}),
        });
    } else {
      const r = stdio.safeParse(e);
      if (!r.success) problems.push(`server "${name}": ${issueText(r.error)}`);
      else {
        const { command, args, env, cwd } = r.data;
        servers.push({
          name,
          transport: { kind: "stdio", command, args, env, ...(cwd ? { cwd: resolve(baseDir, cwd) } : {}) },
          timeoutMs: r.data.timeoutMs,
          ...(r.data.trusted ? { trusted: true } : {}),
        });
      }
    }
  }
  return { servers, problems };
}

/** Reads and validates the file; a missing or malformed file is a problem, never a throw. */
export async function loadMcpConfig(path: string, vars: Vars = process.env): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    return { servers: [], problems: [`cannot read ${path}: ${(e as Error).message}`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { servers: [], problems: [`${path} is not valid JSON: ${(e as Error).message}`] };
  }
  const config = parseMcpConfig(json, dirname(resolve(path)), vars);
  return { servers: config.servers, problems: config.problems.map((p) => `${path}: ${p}`) };
}
