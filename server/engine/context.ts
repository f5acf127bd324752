// How much a model can read at once, and when a conversation must be summarized to go on: the
// context window guessed from the model's name (or set with QUIVER_CONTEXT_WINDOW), corrected
// by what the provider says when a request does not fit, and the share of it at which a
// session is compacted before the next request fails.
import type { Db, DbProvider } from "../db";
import type { ProviderKind } from "./types";
import type { Usage } from "../protocol/events";

/** Compaction starts once the last request (prompt and reply) filled this share of the window:
 *  the rest is left for the next reply, tool results and the summary request itself. */
export { COMPACT_AT } from "../protocol/events";

/** Known windows by model name (the first pattern that matches wins). Local servers load models
 *  with windows of their own choosing; QUIVER_CONTEXT_WINDOW and the providers' overflow
 *  answers correct what this cannot know. */
const KNOWN: [RegExp, number][] = [
  [/claude/i, 200_000],
  [/gpt-4\.1/i, 1_047_576],
  [/gpt-5/i, 400_000],
  [/\bo[134](-|$)/i, 200_000],
  [/gpt-4o|gpt-4-turbo/i, 128_000],
  [/deepseek/i, 128_000],
  [/gemini/i, 1_048_576],
  [/qwen|llama|mistral|gemma/i, 32_768],
];
const FALLBACK: Record<ProviderKind, number> = { anthropic: 200_000, openai: 128_000 };

export function guessContextWindow(kind: ProviderKind, model: string): number {
  return KNOWN.find(([re]) => re.test(model))?.[1] ?? FALLBACK[kind];
}

/** The tokens a request occupied: its whole prompt (cached or not) and its reply. */
export const contextTokens = (u: Usage) => u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.outputTokens;

const OVERFLOW =
  /prompt is too long|maximum context length|context[_ ]length[_ ]exceeded|context window|too many tokens|exceeds the context|input is too long/i;

/**
 * Whether a provider error says the request did not fit the model's context, and the window it
 * names when it names one: Anthropic "prompt is too long: 201234 tokens > 200000 maximum",
 * OpenAI / vLLM / DeepSeek "This model's maximum context length is 65536 tokens".
 */
export function contextOverflow(message: string): { window?: number } | undefined {
  if (!OVERFLOW.test(message)) return undefined;
  const named =
    /(\d[\d,]*) maximum/i.exec(message) ??
    /maximum context length is (\d[\d,]*)/i.exec(message) ??
    /context window (?:of|is) (\d[\d,]*)/i.exec(message);
  const window = named ? Number(named[1].replace(/,/g, "")) : undefined;
  return window && window >= 1024 ? { window } : {};
}

/** Context windows per provider and model: the configured or guessed one until a provider
 *  names the real one in an overflow answer. */
export class ContextWindows {
  private readonly learned = new Map<string, number>();
  constructor(private readonly configured?: number) {}

  of(kind: ProviderKind, model: string): number {
    return this.learned.get(`${kind}\n${model}`) ?? this.configured ?? guessContextWindow(kind, model);
  }

  learn(kind: ProviderKind, model: string, window: number) {
    this.learned.set(`${kind}\n${model}`, window);
  }
}

const LAST_REQUEST = `SELECT r."inputTokens", r."outputTokens", r."cacheReadTokens", r."cacheWriteTokens"
  FROM "ModelRequest" r JOIN "Turn" t ON t."id" = r."turnId"
  WHERE t."sessionId" = $1 AND r."endedAt" IS NOT NULL AND r."error" IS NULL ORDER BY r."startedAt" DESC LIMIT 1`;
const LAST_REQUEST_SQL = { postgresql: LAST_REQUEST, sqlite: LAST_REQUEST.replace("$1", "?") } as const;

/** The context the session's last finished request filled (0: none), read from its row: after a
 *  restart, or when a peer instance ran the session's last turn. Plain SQL when the provider is
 *  named (the query thread runs it on its driver; Prisma's findFirst compiled about 1 ms of CPU
 *  there, once per session a server serves). */
export async function lastRequestTokens(db: Db, sessionId: string, provider?: DbProvider): Promise<number> {
  const last = provider
    ? ((await db.$queryRawUnsafe(LAST_REQUEST_SQL[provider], sessionId)) as Record<keyof Usage, number | bigint>[])[0]
    : await db.modelRequest.findFirst({
        where: { turn: { sessionId }, endedAt: { not: null }, error: null },
        orderBy: { startedAt: "desc" },
        select: { inputTokens: true, outputTokens: true, cacheReadTokens: true, cacheWriteTokens: true },
      });
  if (!last) return 0;
  return (
    Number(last.inputTokens) + Number(last.cacheReadTokens) + Number(last.cacheWriteTokens) + Number(last.outputTokens)
  );
}

/** The context each session's latest request filled, for the sessions that made one most
 *  recently (at most `keep`): a long-running server is not a list of every session it ever
 *  served. A session not kept is read back from its last model request. */
export class RecentContext {
  private readonly tokens = new Map<string, number>();
  constructor(private readonly keep = 10_000) {}

  get(sessionId: string): number | undefined {
    return this.tokens.get(sessionId);
  }

  set(sessionId: string, tokens: number) {
    // Re-inserted so the Map's order is the order of last use; the oldest goes first.
    this.tokens.delete(sessionId);
    this.tokens.set(sessionId, tokens);
    if (this.tokens.size > this.keep) this.tokens.delete(this.tokens.keys().next().value!);
  }

  get size() {
    return this.tokens.size;
  }
}
