// Joined redaction of streamed pieces, in process: every kind of secret split at every offset
// into 2 and 3 pieces of a turn's text, its reasoning and a command's output comes out as the
// whole text redacted at once would, the secret nowhere; pieces leave in order with their seq.
// (A real server and a share link's WebSocket: share-view-stream.test.ts.)
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../protocol/events";
import { redactText } from "./redact";
import { HOLD_CAP, redactEventList, safeCut, ViewerRedaction } from "./redact-stream";
import { leaks, SECRET_CASES, splits } from "./secrets.testdata";

type Kind = "text.delta" | "reasoning.delta" | "tool.progress";

function piecesAs(kind: Kind, pieces: string[], first = 1): SessionEvent[] {
  const base = { sessionId: "s", at: "" };
  const body = (text: string) =>
    kind === "tool.progress" ? { type: kind, callId: "c1", chunk: text } : { type: kind, turnId: "t1", text };
  const end =
    kind === "tool.progress"
      ? {
          type: "tool.finished",
          callId: "c1",
          status: "succeeded",
          output: "",
          isError: false,
          truncated: false,
          durationMs: 1,
        }
      : { type: "turn.finished", turnId: "t1", status: "completed" };
  return [
    ...pieces.map((p, i) => ({ ...base, seq: first + i, ...body(p) })),
    { ...base, seq: first + pieces.length, ...end },
  ] as SessionEvent[];
}

const joined = (events: SessionEvent[]) =>
  events
    .map((e) =>
      e.type === "tool.progress" ? e.chunk : e.type === "text.delta" || e.type === "reasoning.delta" ? e.text : "",
    )
    .join("");

describe("a secret split across pieces", () => {
  for (const kind of ["text.delta", "reasoning.delta", "tool.progress"] as const) {
    it.each(SECRET_CASES.map((c) => [c.kind, c] as const))(`%s in ${kind}, every 2- and 3-piece split`, (_k, c) => {
      const whole = redactText(c.text);
      expect(leaks(whole, c.secret)).toBeUndefined();
      let n = 0;
      for (const pieces of [...splits(c.text, 2), ...splits(c.text, 3)]) {
        const out = redactEventList(piecesAs(kind, pieces));
        expect(out.map((e) => e.seq)).toEqual(pieces.map((_, i) => i + 1).concat(pieces.length + 1));
        const text = joined(out);
        if (leaks(text, c.secret) || text !== whole) expect({ pieces, text }).toEqual({ pieces, text: whole });
        n++;
      }
      expect(n).toBeGreaterThan(c.text.length);
    });
  }

  it("holds back only what may still be a secret: the last word, a secret-named line, an open key", () => {
    expect(safeCut("hello wor")).toBe(6);
    expect(safeCut("hello world\n")).toBe(12);
    expect(safeCut("see Authorization: Bearer ")).toBe("see Authorization: ".length);
    expect(safeCut("ok\nexport API_TOKEN=abc def")).toBe(3);
    expect(safeCut("ok\nThe tokenizer splits text ")).toBe("ok\nThe tokenizer splits text ".length);
    expect(safeCut("a\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\nAAAA\n")).toBe(2);
    const key = "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----";
    expect(safeCut(`${key}\n`)).toBe(key.length + 1);
    expect(safeCut('x\n  "password":\n')).toBe(2);
  });

  it("lets the viewer read live: a piece goes out as soon as its text is decided", () => {
    const r = new ViewerRedaction();
    const ev = (seq: number, text: string) =>
      ({ type: "text.delta", turnId: "t", text, seq, sessionId: "s", at: "" }) as SessionEvent;
    expect(r.push(ev(1, "Hello there, ")).map((e) => (e as { text: string }).text)).toEqual(["Hello there, "]);
    expect(r.push(ev(2, "my key is sk-ant-api03-abc"))).toEqual([]);
    const texts = (evs: SessionEvent[]) => evs.map((e) => [e.seq, (e as { text: string }).text]);
    expect(texts(r.push(ev(3, "defghijklmnopqrstuvwxyz0 and")))).toEqual([[2, "my key is [redacted]"]]);
    expect(texts(r.push(ev(4, " more\n")))).toEqual([
      [3, " and"],
      [4, " more\n"],
    ]);
  });

  it("catches a private key longer than the hold-back whole, and drops its body to its END line", () => {
    const body = "QUJD".repeat(Math.ceil((HOLD_CAP * 1.5) / 4)).replace(/(.{64})/g, "$1\n");
    const text = `before\n-----BEGIN OPENSSH PRIVATE KEY-----\n${body}\n-----END OPENSSH PRIVATE KEY-----\nafter the key\n`;
    const pieces = text.match(/[\s\S]{1,997}/g)!;
    const out = joined(redactEventList(piecesAs("tool.progress", pieces)));
    expect(out).not.toContain("QUJDQUJD");
    expect(out).toContain("before\n");
    expect(out).toContain("after the key\n");
  });

  it("ends a held stream when many events wait behind it", () => {
    const r = new ViewerRedaction();
    const out: SessionEvent[] = [];
    out.push(
      ...r.push({
        type: "tool.progress",
        callId: "a",
        chunk: "held-word",
        seq: 1,
        sessionId: "s",
        at: "",
      } as SessionEvent),
    );
    for (let i = 0; i < 5_000; i++)
      out.push(
        ...r.push({
          type: "tool.progress",
          callId: "b",
          chunk: "line\n",
          seq: i + 2,
          sessionId: "s",
          at: "",
        } as SessionEvent),
      );
    expect(out.length).toBeGreaterThan(4_000);
    expect(out[0]).toMatchObject({ seq: 1, chunk: "held-word" });
  });
});
