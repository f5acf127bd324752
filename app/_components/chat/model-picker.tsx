"use client";
// The model the session talks to, under the composer: its provider and model, and a small form
// to choose another for the session's next messages (a provider this server is not configured
// for is shown with what to set, and cannot be chosen). A turn already running keeps its model.
import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useIdeCommand } from "../../_lib/ide-bus";
import { effectiveModel, PROVIDER_LABEL, type ModelChoices } from "../../_lib/model-choice";
import { ModelField } from "./model-field";
import styles from "./chat.module.css";

type Provider = "anthropic" | "openai";

/** The IDE bus's "model.choose" opens the form (the command palette); `children` go at the bar's right end. */
export function ModelPicker({ sessionId, children }: { sessionId: string; children?: ReactNode }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const choices = useQuery(trpc.sessions.models.queryOptions(undefined, { staleTime: 60_000 }));
  const setModel = useMutation(trpc.sessions.setModel.mutationOptions());
  const [open, setOpen] = useState(false);
  const close = useCallback(() => setOpen(false), []);
  useIdeCommand("model.choose", () => setOpen(true));
  const current = session.data && choices.data ? effectiveModel(session.data, choices.data) : undefined;

  return (
    <div className={styles.modelBar}>
      <button
        type="button"
        className={styles.modelButton}
        onClick={() => setOpen(!open)}
        aria-expanded={open}
        title="The model this session's next messages go to"
        data-testid="model-picker"
        disabled={!current}
      >
        {current
          ? current.model
            ? `${current.model} · ${PROVIDER_LABEL[current.provider]}${current.isDefault ? " (default)" : ""}`
            : "No model configured"
          : "…"}
      </button>
      {children}
      {open && session.data && choices.data && (
        <ModelForm
          choices={choices.data}
          chosen={{ provider: session.data.provider as Provider | null, model: session.data.model }}
          onClose={close}
          save={async (provider, model) => {
            const saved = await setModel.mutateAsync({ id: sessionId, provider, model });
            queryClient.setQueryData(trpc.sessions.get.queryKey({ id: sessionId }), saved);
          }}
        />
      )}
    </div>
  );
}

interface FormProps {
  choices: ModelChoices;
  chosen: { provider: Provider | null; model: string | null };
  onClose(): void;
  /** Stores the choice; rejects with the server's reason. */
  save(provider: Provider | null, model: string | null): Promise<void>;
}

function ModelForm({ choices, chosen, onClose, save }: FormProps) {
  const [provider, setProvider] = useState<Provider | "">(chosen.provider ?? "");
  const [model, setModel] = useState(chosen.model ?? "");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector("select")?.focus(), []);
  // A click elsewhere closes it, as any popover; what was chosen but not applied is dropped.
  useEffect(() => {
    const outside = (e: PointerEvent) => {
      if (!form.current?.parentElement?.contains(e.target as Node)) onClose();
    };
    window.addEventListener("pointerdown", outside, true);
    return () => window.removeEventListener("pointerdown", outside, true);
  }, [onClose]);
  const offer = choices.providers.find((p) => p.kind === provider);
  const fallback = choices.fallback;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await save(provider || null, provider && model.trim() ? model.trim() : null);
      onClose();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <form
      ref={form}
      className={styles.modelForm}
      onSubmit={submit}
      onKeyDown={(e) => e.key === "Escape" && (e.stopPropagation(), onClose())}
      data-testid="model-form"
    >
      <label>
        Provider
        <select
          value={provider}
          onChange={(e) => (setProvider(e.target.value as Provider | ""), setModel(""))}
          data-testid="model-provider"
        >
          <option value="">
            Server default
            {fallback ? ` (${fallback.model} · ${PROVIDER_LABEL[fallback.provider]})` : " (none configured)"}
          </option>
          {choices.providers.map((p) => (
            <option key={p.kind} value={p.kind} disabled={!p.configured}>
              {PROVIDER_LABEL[p.kind]}
              {p.configured ? "" : ` (set ${p.needs})`}
            </option>
          ))}
        </select>
      </label>
      <ModelField
        provider={offer ? offer.kind : ""}
        value={model}
        onChange={setModel}
        placeholder={offer ? `${offer.defaultModel} (its default)` : "the server's"}
      />
      <p className="muted">Used from the next message on.</p>
      {error && (
        <div className={styles.error} role="alert">
          {error}
        </div>
      )}
      <div className={styles.modelActions}>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" disabled={busy} data-testid="model-save">
          Use
        </button>
      </div>
    </form>
  );
}
