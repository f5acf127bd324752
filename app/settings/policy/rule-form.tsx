"use client";
// The form that adds one rule to the draft policy: an effect and at least one condition.
import { useState } from "react";
import { CAPABILITIES, EFFECTS, emptyDraft, ruleFromDraft, type Draft, type Rule } from "./rules";
import styles from "./policy.module.css";

export function RuleForm({ onAdd }: { onAdd(rule: Rule): void }) {
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [error, setError] = useState<string | null>(null);
  const field = (key: keyof Draft) => ({
    value: draft[key],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [key]: e.target.value }),
  });
  return (
    <form
      className={styles.form}
      data-testid="rule-form"
      onSubmit={(e) => {
        e.preventDefault();
        const r = ruleFromDraft(draft);
        if (!r.ok) return setError(r.error);
        setError(null);
        setDraft(emptyDraft);
        onAdd(r.rule);
      }}
    >
      <label>
        Effect
        <select {...field("effect")} data-testid="rule-effect">
          {EFFECTS.map((e) => (
            <option key={e}>{e}</option>
          ))}
        </select>
      </label>
      <label>
        Tool (glob)
        <input {...field("tool")} placeholder="shell, read_*, mcp__github__*" data-testid="rule-tool" />
      </label>
      <label>
        Capability
        <select {...field("capability")} data-testid="rule-capability">
          <option value="">any</option>
          {CAPABILITIES.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
      </label>
      <label>
        Command prefix
        <input {...field("command")} placeholder="git push, rm -rf" data-testid="rule-command" />
      </label>
      <label>
        Host (glob)
        <input {...field("host")} placeholder="*.example.com" data-testid="rule-host" />
      </label>
      <label className={styles.wide}>
        Reason (shown when the rule applies)
        <input {...field("reason")} placeholder="Pushes go through review" data-testid="rule-reason" />
      </label>
      <div className={styles.formActions}>
        <button type="submit" data-testid="rule-add">
          Add rule
        </button>
        {error && (
          <span className={styles.error} role="alert">
            {error}
          </span>
        )}
      </div>
    </form>
  );
}
