"use client";
// A subagent (the task tool) in the chat: under the task call's card, a collapsible card with
// what the subagent said and the cards of its own calls, in order. Open while it works, folded
// once it has reported (its report is the task card's output). Rebuilt from the events alone,
// so a reload shows the same.
import { useState, type ReactNode } from "react";
import type { ToolCard } from "../../_lib/session-state";
import { TASK_TOOL } from "../../_lib/subagent-state";
import { ToolCardView } from "./tool-card";
import styles from "./subagent.module.css";

const noAnswer = async () => undefined;

function SubagentCard({
  card,
  tools,
  onViewSpill,
}: {
  card: ToolCard;
  tools: Record<string, ToolCard>;
  onViewSpill(ref: string, title: string): void;
}) {
  const [open, setOpen] = useState<boolean | null>(null);
  const working = card.status === "running" || card.status === "queued";
  const sub = card.sub ?? [];
  const calls = sub.filter((i) => i.kind === "tool").length;
  const shown = open ?? working;
  return (
    // The toggle event also fires when React opens or folds it: only a person's click, which
    // disagrees with what is shown, is kept as their choice.
    <details
      className={styles.subagent}
      data-testid="subagent-card"
      data-status={card.status}
      open={shown}
      onToggle={(e) => e.currentTarget.open !== shown && setOpen(e.currentTarget.open)}
    >
      <summary>
        Subagent: {card.summary} · {calls} {calls === 1 ? "tool call" : "tool calls"}
        {working ? " · working…" : ""}
      </summary>
      <div className={styles.body}>
        {sub.map((item, n) =>
          item.kind === "text" ? (
            <div key={`t${n}`} className={styles.text} data-testid="subagent-text">
              {item.text.trim()}
            </div>
          ) : tools[item.callId] ? (
            // A subagent never asks the person, so its cards have no approval to answer.
            <ToolCardView key={item.callId} card={tools[item.callId]} onAnswer={noAnswer} onViewSpill={onViewSpill} />
          ) : null,
        )}
        {sub.length === 0 && <div className="muted">{working ? "Starting…" : "It made no calls."}</div>}
      </div>
    </details>
  );
}

/** The task call's card with its subagent's card under it; any other card as it is. */
export function WithSubagent({
  card,
  tools,
  onViewSpill,
  children,
}: {
  card: ToolCard;
  tools: Record<string, ToolCard>;
  onViewSpill(ref: string, title: string): void;
  children: ReactNode;
}) {
  if (card.name !== TASK_TOOL) return <>{children}</>;
  return (
    <div data-testid="task-call">
      {children}
      <SubagentCard card={card} tools={tools} onViewSpill={onViewSpill} />
    </div>
  );
}
