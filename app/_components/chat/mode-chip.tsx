"use client";
// The session's mode by the composer (server/policy/modes.ts): a chip that shows it and opens
// the choice; Shift+Tab in the message box cycles it (as in Claude Code). Modes the org forbids
// are left out. Every open tab follows the session.mode event (SessionState.mode).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "../../_lib/trpc";
import styles from "./chat.module.css";

export const MODE_LABELS: Record<string, string> = {
  plan: "Plan",
  ask: "Ask",
  "accept-edits": "Accept edits",
  auto: "Auto",
};
const CYCLE = ["ask", "accept-edits", "plan", "auto"] as const;
type Mode = (typeof CYCLE)[number];

export function useSessionMode(sessionId: string, fromEvents?: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const query = useQuery(trpc.sessions.mode.queryOptions({ sessionId }, { retry: false }));
  const set = useMutation(
    trpc.sessions.setMode.mutationOptions({
      onSuccess: (info) => queryClient.setQueryData(trpc.sessions.mode.queryKey({ sessionId }), info),
    }),
  );
  const forbidden = (query.data?.forbidden ?? []) as string[];
  const mode = (fromEvents ?? query.data?.mode ?? "ask") as Mode;
  const choose = (m: Mode) => set.mutate({ sessionId, mode: m });
  const cycle = () => {
    const from = CYCLE.indexOf(mode);
    for (let i = 1; i <= CYCLE.length; i++) {
      const m = CYCLE[(from + i) % CYCLE.length];
      if (!forbidden.includes(m)) return choose(m);
    }
  };
  return { mode, forbidden, choose, cycle, error: set.error?.message };
}

/** `cycle`: set to the chip's Shift+Tab action, for the message box to call. */
export function ModeChip({
  sessionId,
  fromEvents,
  cycle,
}: {
  sessionId: string;
  fromEvents?: string;
  cycle: { current?: () => void };
}) {
  const state = useSessionMode(sessionId, fromEvents);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    cycle.current = state.cycle;
  });
  return (
    <span className={styles.modeChip}>
      <button
        type="button"
        data-testid="mode-chip"
        data-mode={state.mode}
        title="Mode (Shift+Tab in the message box cycles)"
        onClick={() => setOpen(!open)}
      >
        {MODE_LABELS[state.mode] ?? state.mode}
      </button>
      {open && (
        <span role="menu" data-testid="mode-menu">
          {CYCLE.filter((m) => !state.forbidden.includes(m)).map((m) => (
            <button
              key={m}
              role="menuitemradio"
              aria-checked={m === state.mode}
              data-testid={`mode-${m}`}
              onClick={() => {
                state.choose(m);
                setOpen(false);
              }}
            >
              {MODE_LABELS[m]}
            </button>
          ))}
        </span>
      )}
      {state.error && (
        <span className={styles.error} data-testid="mode-error">
          {state.error}
        </span>
      )}
    </span>
  );
}

/** exit_plan_mode's card: the plan, "Accept and implement" in a chosen mode, or "Keep planning". */
export function PlanCard({
  sessionId,
  approvalId,
  plan,
  onKeepPlanning,
}: {
  sessionId: string;
  approvalId: string;
  plan: string;
  onKeepPlanning(message?: string): Promise<unknown>;
}) {
  const trpc = useTRPC();
  const { forbidden } = useSessionMode(sessionId);
  const accept = useMutation(trpc.sessions.acceptPlan.mutationOptions());
  const choices = (["ask", "accept-edits", "auto"] as const).filter((m) => !forbidden.includes(m));
  const [mode, setMode] = useState<Mode>(choices.includes("accept-edits") ? "accept-edits" : "ask");
  const [message, setMessage] = useState("");
  return (
    <div className={styles.approval} data-testid="plan-card">
      <pre className={styles.approvalWhat} data-testid="plan-text">
        {plan}
      </pre>
      <div className={styles.approvalButtons}>
        <select
          value={mode}
          onChange={(e) => setMode(e.target.value as Mode)}
          data-testid="plan-mode"
          aria-label="Mode to implement in"
        >
          {choices.map((m) => (
            <option key={m} value={m}>
              {MODE_LABELS[m]}
            </option>
          ))}
        </select>
        <button
          className={styles.approve}
          disabled={accept.isPending}
          onClick={() => accept.mutate({ sessionId, approvalId, mode })}
          data-testid="plan-accept"
        >
          Accept and implement
        </button>
        <input
          placeholder="What to change (optional)"
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          data-testid="plan-message"
        />
        <button onClick={() => void onKeepPlanning(message.trim() || undefined)} data-testid="plan-keep">
          Keep planning
        </button>
      </div>
      {accept.error && <div className={styles.error}>{accept.error.message}</div>}
    </div>
  );
}
