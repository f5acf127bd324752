// What a session's model requests used and cost: tokens per turn and for the whole session,
// cache reads and writes apart, priced per model (a turn's subagents and summaries are requests
// of it too). Read from the ModelRequest rows, each closed with its usage before the turn's
// usage event goes out, so a figure read on that event includes the request it announces.
import type { Db } from "../db";
import { costOf, priceOf, type PriceTable } from "../engine/pricing/prices";
import type { Usage } from "../protocol/events";
import type { CostFigure, SessionCost } from "../protocol/ide-types";

const empty = (): CostFigure => ({
  usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
  unpriced: [],
});

function add(figure: CostFigure, model: string, usage: Usage, table: PriceTable): void {
  const u = figure.usage;
  u.inputTokens += usage.inputTokens;
  u.outputTokens += usage.outputTokens;
  u.cacheReadTokens += usage.cacheReadTokens;
  u.cacheWriteTokens += usage.cacheWriteTokens;
  const used = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  if (used === 0) return;
  const cost = costOf(usage, priceOf(model, table));
  if (cost === undefined) {
    if (!figure.unpriced.includes(model)) figure.unpriced.push(model);
  } else figure.costUsd = (figure.costUsd ?? 0) + cost;
}

export async function sessionCost(db: Db, sessionId: string, table: PriceTable): Promise<SessionCost> {
  const rows = await db.modelRequest.groupBy({
    by: ["turnId", "model"],
    where: { turn: { sessionId } },
    _sum: { inputTokens: true, outputTokens: true, cacheReadTokens: true, cacheWriteTokens: true },
  });
  const total = empty();
  const turns: Record<string, CostFigure> = {};
  for (const r of rows) {
    const usage: Usage = {
      inputTokens: r._sum.inputTokens ?? 0,
      outputTokens: r._sum.outputTokens ?? 0,
      cacheReadTokens: r._sum.cacheReadTokens ?? 0,
      cacheWriteTokens: r._sum.cacheWriteTokens ?? 0,
    };
    add(total, r.model, usage, table);
    add((turns[r.turnId] ??= empty()), r.model, usage, table);
  }
  return { total, turns };
}
