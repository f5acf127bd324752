"use client";
// The model picker's name field: free text, with the provider's own list of models under it
// (sessions.modelList: the OpenAI-compatible GET /models or Anthropic's models list, cached on
// the server) narrowed by what is typed, each marked with whether it takes images. When the
// list cannot be read the field says so and stays free text.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "./chat.module.css";

const SHOWN = 50;

export const imagesLabel = (images: boolean | undefined) =>
  images === true ? "takes images" : images === false ? "text only" : "images: not known";

interface Props {
  provider: "anthropic" | "openai" | "";
  value: string;
  placeholder: string;
  onChange(model: string): void;
}

export function ModelField({ provider, value, placeholder, onChange }: Props) {
  const trpc = useTRPC();
  const listing = useQuery(
    trpc.sessions.modelList.queryOptions(
      { provider: provider || "anthropic" },
      { enabled: !!provider, staleTime: 60_000, retry: false },
    ),
  );
  const typed = value.trim().toLowerCase();
  const models = listing.data?.models ?? [];
  const matches = models.filter(
    (m) => !typed || m.id.toLowerCase().includes(typed) || m.name?.toLowerCase().includes(typed),
  );
  const exact = models.find((m) => m.id === value.trim());

  return (
    <>
      <label>
        Model
        <input
          value={value}
          onChange={(e) => onChange(e.target.value)}
          placeholder={placeholder}
          disabled={!provider}
          spellCheck={false}
          aria-describedby="model-list-note"
          data-testid="model-name"
        />
      </label>
      {provider && (
        <div className={styles.modelList}>
          <p id="model-list-note" className="muted" data-testid="model-list-note">
            {listing.isPending
              ? "Reading the provider's models…"
              : listing.data?.error
                ? listing.data.error
                : exact
                  ? `${exact.id}: ${imagesLabel(exact.images)}.`
                  : `${models.length} model${models.length === 1 ? "" : "s"} from the provider; or type any name.`}
          </p>
          {matches.length > 0 && (
            <ul role="listbox" aria-label="The provider's models" data-testid="model-list">
              {matches.slice(0, SHOWN).map((m) => (
                <li key={m.id} role="option" aria-selected={m.id === value.trim()}>
                  <button
                    type="button"
                    onClick={() => onChange(m.id)}
                    data-testid="model-option"
                    data-model={m.id}
                    data-images={String(m.images ?? "unknown")}
                  >
                    <span>{m.id}</span>
                    {m.name && m.name !== m.id && <span className="muted"> {m.name}</span>}
                    <span className={m.images ? styles.modelImages : styles.modelNoImages}>
                      {" "}
                      · {imagesLabel(m.images)}
                    </span>
                  </button>
                </li>
              ))}
              {matches.length > SHOWN && <li className="muted">{matches.length - SHOWN} more: type to narrow.</li>}
            </ul>
          )}
        </div>
      )}
    </>
  );
}
