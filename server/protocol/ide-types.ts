// Shapes the IDE (app/) reads from the server's answers, kept here so the pages import nothing
// of the server's internals: a file tree's entry (services/files.ts), an org policy rule
// (policy/rules.ts evaluates it), what the model picker offers (engine/providers) and a
// session's priced tokens (services/session-cost.ts).
import { z } from "zod";
import type { Usage } from "./events";

/** One entry of the workspace's file tree. */
export interface TreeEntry {
  path: string;
  type: "file" | "dir" | "link";
}

export type ProviderKind = "anthropic" | "openai";

/** What the IDE's model picker offers: each provider, whether this server can reach it (and
 *  what to set when not), its default model, and what a session without a choice gets. */
export interface ModelChoices {
  providers: { kind: ProviderKind; configured: boolean; defaultModel: string; needs?: string }[];
  /** The server's default for a session that chose nothing (none: nothing configured). */
  fallback: { provider: ProviderKind; model: string } | null;
}

export const Effect = z.enum(["allow", "ask", "deny"]);
export type Effect = z.infer<typeof Effect>;

export const PolicyRule = z
  .object({
    id: z.string().trim().min(1).max(100).optional(),
    effect: Effect,
    /** Glob over the tool name: `*` any run of characters, `?` one character. */
    tool: z.string().trim().min(1).max(200).optional(),
    capability: z.enum(["ReadsFiles", "WritesFiles", "ExecutesCode", "Network", "Interactive"]).optional(),
    /** Shell command prefix, e.g. `git push` or `rm -rf`. */
    command: z.string().trim().min(1).max(500).optional(),
    /** URL host glob, e.g. `*.github.com`; `*.x.com` matches subdomains, `x.com` only itself. */
    host: z.string().trim().min(1).max(253).optional(),
    mcpServer: z.string().trim().min(1).max(200).optional(),
    reason: z.string().max(500).optional(),
  })
  .strict()
  .refine((r) => r.tool || r.capability || r.command || r.host || r.mcpServer, {
    message: "a rule needs at least one of tool, capability, command, host, mcpServer",
  });
export type PolicyRule = z.infer<typeof PolicyRule>;

/** Tokens and dollars for a turn or a whole session. */
export interface CostFigure {
  usage: Usage;
  /** Dollars for the priced models' tokens; undefined when no request's model has a price. */
  costUsd?: number;
  /** Models with tokens but no price: the dollars leave their tokens out. */
  unpriced: string[];
}

/** What sessions.cost answers: the session's total and each turn's (by turn id). */
export interface SessionCost {
  total: CostFigure;
  turns: Record<string, CostFigure>;
}
