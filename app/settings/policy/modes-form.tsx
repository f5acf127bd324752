"use client";
// The org's session modes (server/policy/modes.ts): admins and owners forbid modes for every
// session of the org (e.g. Auto); members see which are forbidden. Ask cannot be forbidden: it is
// where a session in a newly forbidden mode falls back to, at its next call.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "./policy.module.css";

const FORBIDDABLE = [
  { mode: "plan", label: "Plan", says: "read-only: the agent reads, searches and writes a plan" },
  { mode: "accept-edits", label: "Accept edits", says: "file edits in the workspace run without a card" },
  { mode: "auto", label: "Auto", says: "every call this policy allows runs without a card" },
] as const;

export function ModesForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const modes = useQuery(trpc.policies.modes.queryOptions());
  const save = useMutation(
    trpc.policies.setForbiddenModes.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.policies.modes.queryKey() }),
    }),
  );
  if (!modes.data) return null;
  const { forbidden, canEdit } = modes.data;
  return (
    <section data-testid="policy-modes">
      <h2>Session modes</h2>
      <p className="muted">
        Ask (every change asks) is always allowed. A session in a mode forbidden here goes back to Ask at its next call.
      </p>
      {FORBIDDABLE.map((m) => (
        <label key={m.mode} style={{ display: "block" }}>
          <input
            type="checkbox"
            data-testid={`allow-mode-${m.mode}`}
            checked={!forbidden.includes(m.mode)}
            disabled={!canEdit || save.isPending}
            onChange={(e) =>
              save.mutate({
                forbidden: e.target.checked ? forbidden.filter((f) => f !== m.mode) : [...forbidden, m.mode],
              })
            }
          />{" "}
          Allow {m.label} <span className="muted">({m.says})</span>
        </label>
      ))}
      {save.error && <p className={styles.error}>{save.error.message}</p>}
    </section>
  );
}
