// A cancelled turn reports what streamed (issue 23, item 12): the provider's output count comes
// at the end of a stream, which a cancelled one never reaches, so the usage event and the
// request row count the streamed output instead of 0.
import { describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { eventsUntilFinished, useFakeProvider, waitForEvent } from "../testing/engine";
import { engineCombos, useEngine } from "../testing/engine-suite";

const combos = engineCombos();

describe.each(combos)("usage of a cancelled turn on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  const suite = useEngine(t, kind, provider);

  it("counts the output that streamed before the cancel", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    const text = "Streaming a fairly long answer slowly, then the person presses stop. ".repeat(4);
    provider.current.enqueue({
      blocks: [{ type: "text", text }],
      deltaChars: 8,
      hangAfterBytes: 2500,
      usage: { input: 50, output: 999, cacheRead: 0, cacheWrite: 0 },
    });
    const { turnId } = await suite.engine.sendMessage(sessionId, { userId }, "go");
    await waitForEvent(suite.hub, sessionId, (e) => e.type === "text.delta" && e.text.length > 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(await suite.engine.cancel(sessionId)).toBe(true);
    const events = await eventsUntilFinished(suite.hub, sessionId, turnId);
    const streamed = events.flatMap((e) => (e.type === "text.delta" ? [e.text] : [])).join("");
    expect(streamed.length).toBeGreaterThan(0);
    const usage = events.filter((e) => e.type === "usage").at(-1) as { usage: { outputTokens: number } } | undefined;
    expect(usage?.usage.outputTokens).toBe(Math.ceil(streamed.length / 4));
    const row = await t.current.db.modelRequest.findFirstOrThrow({ where: { turnId } });
    expect(row.outputTokens).toBe(Math.ceil(streamed.length / 4));
  });
});
