"use client";
// ask_user's card, inline where the call is: the question, its options (a click answers) and,
// when the agent allows it, a box for the person's own words (Enter sends). As an approval card
// (approval-card.tsx), it never takes the keyboard (no autofocus: what is typed in the message
// box, terminal or editor stays there) and for ARM_MS after it appears takes no answer, so a
// click or key aimed at what was there before cannot answer it. The server records the first
// answer only; the loser is told. A read-only viewer sees the question without the answers.
import { useEffect, useState } from "react";
import type { QuestionCard as Card } from "../../_lib/agent-ui-state";
import type { QuestionAnswer } from "../../../server/protocol/todos-questions";
import { useReadOnly } from "../../_lib/read-only";
import { ARM_MS } from "./approval-card";
import styles from "./agent-ui.module.css";

export function QuestionCard({ card, onAnswer }: { card: Card; onAnswer(answer: QuestionAnswer): Promise<unknown> }) {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [armed, setArmed] = useState(false);
  const readOnly = useReadOnly();
  const pending = !card.outcome;

  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(() => setArmed(true), ARM_MS);
    return () => clearTimeout(timer);
  }, [pending]);

  const answer = (a: QuestionAnswer) => {
    if (busy || !pending || readOnly || !armed) return;
    setBusy(true);
    setError(undefined);
    onAnswer(a).then(
      () => setBusy(false),
      (err: Error) => {
        setBusy(false);
        setError(err.message);
      },
    );
  };
  const typed = text.trim();

  return (
    <div
      className={`${styles.question} ${pending ? styles.questionPending : ""}`}
      data-testid="question-card"
      data-state={card.outcome ?? "pending"}
      data-armed={pending && armed ? "true" : undefined}
      role="group"
      aria-label={`The agent asks: ${card.question}`}
    >
      <strong>The agent asks</strong>
      <div className={styles.questionText} data-testid="question-text">
        {card.question}
      </div>
      <div className={styles.options}>
        {card.options.map((o, i) => (
          <button
            key={i}
            type="button"
            className={styles.option}
            disabled={!pending || busy || !armed || readOnly}
            data-chosen={card.option === i ? "true" : undefined}
            onClick={() => answer({ option: i })}
            data-testid="question-option"
          >
            <span>{o.label}</span>
            {o.description && <span className={styles.optionDescription}>{o.description}</span>}
          </button>
        ))}
      </div>
      {pending && !readOnly && card.allowText && (
        <form
          className={styles.own}
          onSubmit={(e) => {
            e.preventDefault();
            if (typed) answer({ text: typed });
          }}
        >
          <input
            value={text}
            maxLength={2000}
            placeholder="Or answer in your own words"
            aria-label="Your own answer to the agent's question"
            onChange={(e) => setText(e.target.value)}
            // Esc here is the card's, not a stop of the turn.
            onKeyDown={(e) => e.key === "Escape" && e.stopPropagation()}
            data-testid="question-text-input"
          />
          <button type="submit" disabled={busy || !armed || !typed} data-testid="question-send">
            Answer
          </button>
        </form>
      )}
      {pending && readOnly && (
        <div className={styles.outcome} data-testid="question-waiting">
          Waiting for the owner to answer.
        </div>
      )}
      {card.outcome === "answered" && (
        <div className={styles.outcome} data-testid="question-outcome">
          Answered{card.option === undefined ? ": " : " "}
          {card.option === undefined ? card.answer : `with option ${card.option + 1}`}
        </div>
      )}
      {card.outcome === "cancelled" && (
        <div className={styles.outcome} data-testid="question-outcome">
          Cancelled (the turn was stopped before an answer)
        </div>
      )}
      {error && <div className={styles.error}>{error}</div>}
    </div>
  );
}
