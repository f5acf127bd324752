"use client";
// The Share dialog of a session: create a read-only link (copied to the clipboard, shown once:
// only its hash is kept), pick its expiry, see the session's links and revoke them. A revoked
// link stops working at once, for viewers already watching too.
import { useEffect, useRef, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { useDialogFocus } from "../../_lib/use-dialog-focus";
import styles from "./share.module.css";

const EXPIRY: Array<[label: string, minutes: number | null]> = [
  ["1 hour", 60],
  ["1 day", 24 * 60],
  ["7 days", 7 * 24 * 60],
  ["30 days", 30 * 24 * 60],
  ["Never", null],
];

const when = (iso: string) => new Date(iso).toLocaleString();

export function ShareDialog({ sessionId, onClose }: { sessionId: string; onClose(): void }) {
  const trpc = useTRPC();
  const queries = useQueryClient();
  const list = trpc.shares.list.queryOptions({ sessionId });
  const links = useQuery(list);
  const [expiry, setExpiry] = useState(1);
  const [made, setMade] = useState<{ url: string; copied: boolean }>();
  const refresh = () => void queries.invalidateQueries({ queryKey: list.queryKey });
  const create = useMutation(
    trpc.shares.create.mutationOptions({
      onSuccess: async (link) => {
        const url = `${location.origin}/share/${link.token}`;
        // The clipboard may be refused (no permission, not a secure context): the URL is shown anyway.
        const copied = await navigator.clipboard?.writeText(url).then(
          () => true,
          () => false,
        );
        setMade({ url, copied: copied ?? false });
        refresh();
      },
    }),
  );
  const revoke = useMutation(trpc.shares.revoke.mutationOptions({ onSuccess: refresh }));
  const dialog = useRef<HTMLDivElement>(null);
  useDialogFocus(dialog);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onClose]);

  const error = create.error?.message ?? revoke.error?.message ?? links.error?.message;
  return (
    <div className={styles.modal} onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div
        ref={dialog}
        className={styles.dialog}
        role="dialog"
        aria-modal="true"
        aria-label="Share this session"
        data-testid="share-dialog"
      >
        <div className={styles.head}>
          <h2>Share read-only</h2>
          <button onClick={onClose} aria-label="Close">
            ×
          </button>
        </div>
        <p className="muted">
          Anyone with the link can watch this session live, read its chat and files, and nothing else.
        </p>
        <div className={styles.row}>
          <label>
            Expires after{" "}
            <select value={expiry} onChange={(e) => setExpiry(Number(e.target.value))} data-testid="share-expiry">
              {EXPIRY.map(([label], i) => (
                <option key={label} value={i}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button
            disabled={create.isPending}
            onClick={() =>
              create.mutate({ sessionId, ...(EXPIRY[expiry][1] ? { expiresInMinutes: EXPIRY[expiry][1]! } : {}) })
            }
            data-testid="share-create"
          >
            Create link
          </button>
        </div>
        {made && (
          <div className={styles.row}>
            <input
              className={styles.url}
              readOnly
              value={made.url}
              onFocus={(e) => e.currentTarget.select()}
              data-testid="share-url"
              aria-label="Share link"
            />
            <button
              onClick={() =>
                void navigator.clipboard?.writeText(made.url).then(
                  () => setMade({ ...made, copied: true }),
                  () => {},
                )
              }
            >
              {made.copied ? "Copied" : "Copy"}
            </button>
          </div>
        )}
        {error && <div className={styles.error}>{error}</div>}
        <ul className={styles.links} data-testid="share-links">
          {links.data?.length === 0 && <li className="muted">No links yet.</li>}
          {links.data?.map((l) => (
            <li key={l.id} data-testid="share-link" data-state={l.state}>
              <span>
                Created {when(l.createdAt)} ·{" "}
                {l.expiresAt ? `${l.state === "expired" ? "expired" : "expires"} ${when(l.expiresAt)}` : "no expiry"}
              </span>
              <span className={styles.state}>{l.state}</span>
              {l.state === "active" && (
                <button
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate({ linkId: l.id })}
                  data-testid="share-revoke"
                >
                  Revoke
                </button>
              )}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
