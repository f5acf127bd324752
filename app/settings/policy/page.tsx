"use client";
// The org's tool policy: the rules in force, a draft an admin edits (add, remove), saved as a new
// version on top of the one it was read from, and the versions before it. Members see it read-only.
import Link from "next/link";
import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { RuleForm } from "./rule-form";
import { ModesForm } from "./modes-form";
import { byStrength, describeMatch, type Rule } from "./rules";
import styles from "./policy.module.css";

export default function PolicyPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = useQuery(trpc.policies.current.queryOptions());
  const history = useQuery(trpc.policies.history.queryOptions({ limit: 10 }));
  const [draft, setDraft] = useState<Rule[] | null>(null);
  const [saved, setSaved] = useState<number | null>(null);
  const save = useMutation(
    trpc.policies.set.mutationOptions({
      // The draft stays on screen until the new version has been read back, so the table
      // never flashes the old rules in between.
      onSuccess: async (v) => {
        await queryClient.invalidateQueries({ queryKey: trpc.policies.pathKey() });
        setSaved(v.version);
        setDraft(null);
      },
    }),
  );
  // The saved line is about the version just written; it goes once the person edits again.
  const edit = (next: Rule[]) => {
    setSaved(null);
    setDraft(next);
  };

  if (current.isPending) return <main className={styles.page}>Loading the policy…</main>;
  if (current.error)
    return (
      <main className={styles.page}>
        <p className={styles.error}>Could not load the policy: {current.error.message}</p>
      </main>
    );
  const policy = current.data;
  const rules = draft ?? policy.rules;
  const dirty = draft !== null;

  return (
    <main className={styles.page} data-testid="policy-page">
      <header className={styles.header}>
        <h1>Tool policy</h1>
        <Link href="/">Sessions</Link>
      </header>
      <p className="muted" data-testid="policy-version">
        {policy.version === 0
          ? "No policy saved yet: every tool asks or runs as its own approval rule says."
          : `Version ${policy.version}, saved ${new Date(policy.createdAt).toLocaleString()}.`}{" "}
        Deny beats ask beats allow; a command rule judges each command of a compound line.
        {!policy.canEdit && " Only org admins and owners can change it."}
      </p>
      <table className={styles.rules} data-testid="policy-rules">
        <thead>
          <tr>
            <th>Effect</th>
            <th>Matches</th>
            <th>Reason</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rules.length === 0 && (
            <tr>
              <td colSpan={4} className="muted">
                No rules.
              </td>
            </tr>
          )}
          {byStrength(rules).map(({ rule, index }) => (
            <tr key={index} data-testid="policy-rule" data-effect={rule.effect}>
              <td>
                <span className={`${styles.effect} ${styles[rule.effect]}`}>{rule.effect}</span>
              </td>
              <td className={styles.match}>{describeMatch(rule)}</td>
              <td>{rule.reason ?? <span className="muted">—</span>}</td>
              <td>
                {policy.canEdit && (
                  <button
                    type="button"
                    onClick={() => edit(rules.filter((_, i) => i !== index))}
                    data-testid="rule-remove"
                  >
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {policy.canEdit && (
        <>
          <RuleForm onAdd={(rule) => edit([...rules, rule])} />
          <div className={styles.bar}>
            <button
              type="button"
              className={styles.primary}
              disabled={!dirty || save.isPending}
              onClick={() => save.mutate({ rules, expectedVersion: policy.version })}
              data-testid="policy-save"
            >
              {save.isPending ? "Saving…" : "Save as a new version"}
            </button>
            <button type="button" disabled={!dirty || save.isPending} onClick={() => (setDraft(null), save.reset())}>
              Discard changes
            </button>
            {dirty && !save.error && <span className="muted">Unsaved changes.</span>}
            {save.error && (
              <span className={styles.error} role="alert" data-testid="policy-error">
                {save.error.message}
              </span>
            )}
            {saved !== null && !dirty && (
              <span className={styles.ok} data-testid="policy-saved">
                Saved as version {saved}; it applies to the next tool call.
              </span>
            )}
          </div>
        </>
      )}
      <h2 className="muted" style={{ fontSize: 13 }}>
        Versions
      </h2>
      <ul className={styles.history} data-testid="policy-history">
        {history.data?.map((v) => (
          <li key={v.version}>
            Version {v.version} · {v.rules.length} rule{v.rules.length === 1 ? "" : "s"} ·{" "}
            {new Date(v.createdAt).toLocaleString()}
          </li>
        ))}
        {history.data?.length === 0 && <li className="muted">None yet.</li>}
      </ul>
      <ModesForm />
    </main>
  );
}
