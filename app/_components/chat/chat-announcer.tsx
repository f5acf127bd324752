"use client";
// The chat's polite live region: a screen reader hears each agent message once it is finished
// (its turn ended), not every streamed token, and a turn that ends with an error says so. Only
// turns this chat saw running are read out, not the history shown on opening it.
import { useEffect, useMemo, useRef, useState } from "react";
import type { SessionState } from "../../_lib/session-state";
import styles from "./chat.module.css";

const MAX = 600;

/** What to announce for the latest finished turn, and that turn's id. */
export function finishedMessage(state: SessionState): { turnId: string; text: string } | undefined {
  let end = -1;
  for (let i = state.items.length - 1; i >= 0; i--)
    if (state.items[i].kind === "turn-end") {
      end = i;
      break;
    }
  if (end < 0) return undefined;
  const turnId = (state.items[end] as { turnId: string }).turnId;
  const parts: string[] = [];
  let failed: string | undefined;
  for (let i = end - 1; i >= 0; i--) {
    const it = state.items[i];
    if (it.kind === "user" || it.kind === "turn-end") break;
    if (it.kind === "text" && it.turnId === turnId) parts.unshift(it.text);
    if (it.kind === "error") failed ??= it.message;
  }
  const said = parts
    .join("\n")
    .replace(/[`*_#>]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  const text = said
    ? `Agent: ${said.length > MAX ? `${said.slice(0, MAX)}…` : said}`
    : failed
      ? `The turn ended with an error: ${failed}`
      : "The agent finished.";
  return { turnId, text };
}

export function ChatAnnouncer({ state }: { state: SessionState }) {
  const latest = useMemo(() => finishedMessage(state), [state]);
  // Only turns this chat saw running are announced: history loaded at open is not read out.
  const watched = useRef(new Set<string>());
  const said = useRef<string>(undefined);
  const [text, setText] = useState("");
  useEffect(() => {
    if (state.activeTurnId) watched.current.add(state.activeTurnId);
  }, [state.activeTurnId]);
  useEffect(() => {
    if (!latest || latest.turnId === said.current || !watched.current.has(latest.turnId)) return;
    said.current = latest.turnId;
    watched.current.clear();
    setText(latest.text);
  }, [latest]);
  return (
    <div className={styles.srOnly} role="status" aria-live="polite" aria-atomic="true" data-testid="chat-live">
      {text}
    </div>
  );
}
