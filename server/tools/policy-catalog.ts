// The catalog as an org policy shapes it: a tool the policy denies outright — a deny rule that
// names it by tool glob, capability or MCP server with no narrower condition (command prefix,
// host) — is left out of what the model is offered, since no call of it could ever run. Calls
// are still judged by the policy in the pipeline, so a forged call of such a tool is denied.
// The catalog's bytes depend only on (tool set, denied set), so they stay the same for a
// policy version; a new policy version that changes the denied set changes them once.
import { globToRegExp, type PolicyRule } from "../policy/rules";
import type { LoadedPolicy } from "../policy/decide";
import type { CatalogEntry } from "./catalog";
import type { SessionToolState } from "./session";
import type { Tool } from "./tool";

function mcpServerOf(tool: Tool): string | undefined {
  if (tool.source !== "external") return undefined;
  return (tool as { mcpServer?: string }).mcpServer ?? /^mcp__([^_].*?)__/.exec(tool.name)?.[1];
}

/** True when `rule` denies every call of `tool`, whatever its input. */
export function deniesOutright(rule: PolicyRule, tool: Tool): boolean {
  if (rule.effect !== "deny" || rule.command || rule.host) return false;
  if (rule.tool && !globToRegExp(rule.tool).test(tool.name)) return false;
  if (rule.capability && !tool.capabilities.includes(rule.capability)) return false;
  if (rule.mcpServer) {
    const server = mcpServerOf(tool);
    if (!server || !globToRegExp(rule.mcpServer).test(server)) return false;
  }
  return true;
}

/** Names of the tools a loaded policy denies outright. A policy that failed to load hides nothing
 *  here (every call is refused by the pipeline anyway, and the catalog keeps its bytes). */
export function deniedTools(tools: readonly Tool[], policy: LoadedPolicy): ReadonlySet<string> {
  if (!policy.ok) return new Set();
  const deny = policy.rules.filter((r) => r.effect === "deny" && !r.command && !r.host);
  if (deny.length === 0) return new Set();
  return new Set(tools.filter((t) => deny.some((r) => deniesOutright(r, t))).map((t) => t.name));
}

/** The session's catalog entries under its org's policy. */
export function policyCatalog(state: SessionToolState, policy: LoadedPolicy): CatalogEntry[] {
  return state.entries(deniedTools(state.registry.tools(), policy));
}
