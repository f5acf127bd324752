"use client";
// The Changes panel's remote line (git work trees with a remote): where fetch, pull and push go,
// how far the branch is ahead of or behind it, and the three buttons. Each shows that it is
// working and then git's answer in words (a refused credential, a push the server refused with
// its own message, a pull that cannot fast-forward). Without a stored credential for the
// remote it says so and links to Settings → Git; with one, it names where that credential may be
// used. When the remote is not the one this workspace last pushed to (origin is the agent's to
// rewrite) it says so above the buttons, and each button sends the URL it showed, so a remote
// changed after the panel was read is refused rather than used.
import Link from "next/link";
import { useEffect, useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "./changes.module.css";

type Action = "fetch" | "pull" | "push";
const WORKING: Record<Action, string> = { fetch: "Fetching…", pull: "Pulling…", push: "Pushing…" };

/** `stamp`: when the changes were last read (a commit changes ahead/behind: read again then). */
export function GitSync({ sessionId, stamp, onSynced }: { sessionId: string; stamp: number; onSynced(): void }) {
  const trpc = useTRPC();
  const status = useQuery(trpc.git.status.queryOptions({ sessionId }, { retry: 1 }));
  const { refetch } = status;
  useEffect(() => {
    void refetch();
  }, [stamp, refetch]);
  const [result, setResult] = useState<{ ok: boolean; text: string }>();
  const opts = {
    onSuccess: (r: { message: string }) => {
      setResult({ ok: true, text: r.message });
      void status.refetch();
      onSynced();
    },
    onError: (e: { message: string }) => {
      setResult({ ok: false, text: e.message });
      void status.refetch();
    },
  };
  const fetchRemote = useMutation(trpc.git.fetch.mutationOptions(opts));
  const pull = useMutation(trpc.git.pull.mutationOptions(opts));
  const push = useMutation(trpc.git.push.mutationOptions(opts));
  const running: Action | undefined = fetchRemote.isPending
    ? "fetch"
    : pull.isPending
      ? "pull"
      : push.isPending
        ? "push"
        : undefined;
  const s = status.data;
  if (!s || (!s.remote && !s.remoteProblem)) return null;
  const run = (a: Action) => {
    setResult(undefined);
    ({ fetch: fetchRemote, pull, push })[a].mutate({ sessionId, ...(s.remote ? { url: s.remote } : {}) });
  };

  return (
    <div className={styles.commit} data-testid="git-sync">
      <div title={s.remote ?? undefined}>
        {s.remote ? (
          <span className={styles.dir}>{s.remote}</span>
        ) : (
          <span className={styles.error}>{s.remoteProblem}</span>
        )}
        {s.ahead !== null && s.behind !== null && (
          <span data-testid="git-ahead-behind">
            {" "}
            · ↑{s.ahead} ↓{s.behind}
          </span>
        )}
      </div>
      {s.remote && !s.hasCredential && (
        <div className="muted" data-testid="git-no-credential">
          No credential for this repository on {s.host}: <Link href="/settings/git">add one</Link> (a public repository
          fetches without one).
        </div>
      )}
      {s.remote && s.credentialTarget && (
        <div className="muted" data-testid="git-credential-target">
          With your credential for {s.credentialTarget}
        </div>
      )}
      {s.remoteNote && (
        <div className={styles.error} role="note" data-testid="git-remote-note">
          ⚠ {s.remoteNote}
        </div>
      )}
      {s.remote && (
        <div style={{ display: "flex", gap: 4 }}>
          {(["fetch", "pull", "push"] as const).map((a) => (
            <button
              key={a}
              type="button"
              style={{ flex: 1 }}
              disabled={running !== undefined}
              onClick={() => run(a)}
              data-testid={`git-${a}`}
            >
              {running === a ? WORKING[a] : a[0].toUpperCase() + a.slice(1)}
            </button>
          ))}
        </div>
      )}
      {running && (
        <div className="muted" role="status">
          {WORKING[running]} (this can take a while for a large repository)
        </div>
      )}
      {result && !running && (
        <div
          className={result.ok ? "muted" : styles.error}
          role={result.ok ? "status" : "alert"}
          data-testid={result.ok ? "git-done" : "git-error"}
          style={{ whiteSpace: "pre-wrap" }}
        >
          {result.text}
        </div>
      )}
    </div>
  );
}
